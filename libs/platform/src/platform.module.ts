import { Global, Module, type DynamicModule } from '@nestjs/common';
import type { Logger } from 'pino';
import { HealthController } from './health/health.controller';
import { ReadinessRegistry } from './health/readiness';
import { RouteIndex } from './http/route-index';
import { AppMetrics } from './metrics/app-metrics';
import { MetricsServer } from './metrics/metrics-server';

export const APP_CONFIG = Symbol('APP_CONFIG');
export const APP_LOGGER = Symbol('APP_LOGGER');
export const APP_NAME = Symbol('APP_NAME');

export interface PlatformOptions {
  readonly app: string;
  readonly config: object;
  readonly logger: Logger;
  readonly routes: RouteIndex;
}

/** What every app gets the same way: its validated config, its logger, probes, readiness and metrics. */
@Global()
@Module({})
export class PlatformModule {
  static forRoot(options: PlatformOptions): DynamicModule {
    const metrics = new AppMetrics(options.app);
    const port = (options.config as { METRICS_PORT?: number }).METRICS_PORT;
    const readiness = new ReadinessRegistry();
    // 1 while a dependency answers, 0 while it fails: a shared dependency's outage does not make
    // /readyz fail (after start-up), so this is where it shows. Read at scrape time with a short
    // budget, so a dead dependency cannot stall /metrics.
    metrics.gauge(
      'readiness_dependency_up',
      'whether each dependency answers its readiness check (1) or not (0)',
      async (gauge) => {
        const report = await readiness.report(500);
        for (const [dependency, state] of Object.entries(report.checks))
          gauge.set({ dependency }, state.ok ? 1 : 0);
      },
      ['dependency'],
    );
    return {
      module: PlatformModule,
      controllers: [HealthController],
      providers: [
        { provide: APP_CONFIG, useValue: options.config },
        { provide: APP_LOGGER, useValue: options.logger },
        { provide: APP_NAME, useValue: options.app },
        { provide: RouteIndex, useValue: options.routes },
        { provide: AppMetrics, useValue: metrics },
        { provide: MetricsServer, useValue: new MetricsServer(options.app, metrics, port, options.logger) },
        { provide: ReadinessRegistry, useValue: readiness },
      ],
      exports: [ReadinessRegistry, APP_CONFIG, APP_LOGGER, APP_NAME, RouteIndex, AppMetrics, MetricsServer],
    };
  }
}

import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ReadinessRegistry } from './readiness';

/** Probes for the orchestrator; never routed through the gateway. */
@Controller()
export class HealthController {
  constructor(private readonly readiness: ReadinessRegistry) {}

  /** Liveness: the process answers. Dependencies are not checked here, so an outage does not restart every pod. */
  @Get('healthz')
  live() {
    return { status: 'ok' };
  }

  /**
   * Readiness: 200 once every dependency has answered once, until draining; a shared
   * dependency failing later shows as `degraded` (still 200), see ReadinessRegistry.
   */
  @Get('readyz')
  async ready(@Res({ passthrough: true }) reply: FastifyReply) {
    const report = await this.readiness.report();
    reply.status(report.ready ? 200 : 503).header('cache-control', 'no-store');
    const status = report.draining
      ? 'draining'
      : !report.ready
        ? 'not_ready'
        : report.degraded
          ? 'degraded'
          : 'ready';
    return { status, checks: report.checks };
  }
}

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

  /** 200 from every dependency's first answer until draining; a later failure is `degraded` (still 200). */
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

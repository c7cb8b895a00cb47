import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { AppMetrics } from './app-metrics';

/** Prometheus' scrape endpoint, on the app's port beside the probes; never routed by the gateway. */
@Controller()
export class MetricsController {
  constructor(private readonly metrics: AppMetrics) {}

  @Get('metrics')
  async scrape(@Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    const text = await this.metrics.render();
    reply.header('content-type', this.metrics.registry.contentType).header('cache-control', 'no-store');
    return text;
  }
}

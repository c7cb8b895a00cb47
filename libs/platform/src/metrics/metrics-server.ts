import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { AppMetrics } from './app-metrics';

/**
 * `GET /metrics` on its own port (METRICS_PORT), never routed by the gateway, so metrics never reach
 * partners; up while the app drains. METRICS_PORT=0: an ephemeral port, which `port` says.
 */
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private server?: Server;

  constructor(
    private readonly app: string,
    private readonly metrics: AppMetrics,
    /** Undefined in modules assembled without the base config (a test's own root module): no listener. */
    private readonly listenPort: number | undefined,
    private readonly logger: Logger,
  ) {}

  /** The bound port once the app has started; undefined for an app configured without one. */
  get port(): number | undefined {
    const address = this.server?.address();
    return address && typeof address === 'object' ? (address as AddressInfo).port : undefined;
  }

  /** `http://127.0.0.1:<port>`, for callers on the same host (tests, scripts). */
  get url(): string {
    if (this.port === undefined) throw new Error(`${this.app} serves no metrics port`);
    return `http://127.0.0.1:${this.port}`;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.listenPort === undefined || this.server) return;
    const server = createServer((req, res) => {
      const path = (req.url ?? '').split('?')[0];
      if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
        res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
        return;
      }
      this.metrics.render().then(
        (text) => {
          res.writeHead(200, {
            'content-type': this.metrics.registry.contentType,
            'cache-control': 'no-store',
          });
          res.end(req.method === 'HEAD' ? undefined : text);
        },
        (err: unknown) => {
          this.logger.error({ err }, 'metrics failed to render');
          res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics failed\n');
        },
      );
    });
    // Prometheus scrapes on a schedule; a connection kept idle between scrapes is worth little.
    server.keepAliveTimeout = 5_000;
    // Rejects with the 'error' (a port in use) that comes instead of 'listening'.
    await once(server.listen({ port: this.listenPort, host: '0.0.0.0' }), 'listening');
    this.server = server;
    this.logger.info({ port: this.port }, `${this.app} serving metrics`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}

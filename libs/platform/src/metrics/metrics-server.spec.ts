import { createLogger } from '../logging/logger';
import { AppMetrics } from './app-metrics';
import { MetricsServer } from './metrics-server';

describe('MetricsServer', () => {
  const logger = createLogger('crew-api', 'silent');

  it('serves GET /metrics on a port of its own (0: a free one), 404 for anything else, until the app stops', async () => {
    const metrics = new AppMetrics('crew-api');
    metrics.counter('x_total', 'x').inc();
    const server = new MetricsServer('crew-api', metrics, 0, logger);
    await server.onApplicationBootstrap();
    const url = server.url;
    try {
      expect(server.port).toBeGreaterThan(0);
      const res = await fetch(`${server.url}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(await res.text()).toMatch(/^x_total\{app="crew-api"\} 1$/m);
      for (const [method, path] of [
        ['GET', '/'],
        ['GET', '/healthz'],
        ['GET', '/metrics/extra'],
        ['POST', '/metrics'],
      ])
        expect({ method, path, status: (await fetch(`${server.url}${path}`, { method })).status }).toEqual({
          method,
          path,
          status: 404,
        });
    } finally {
      await server.onApplicationShutdown();
    }
    // Closed with the app: nothing listens there any more.
    expect(server.port).toBeUndefined();
    await expect(fetch(`${url}/metrics`)).rejects.toThrow();
  });

  it('listens on nothing in a module assembled without METRICS_PORT', async () => {
    const server = new MetricsServer('crew-api', new AppMetrics('crew-api'), undefined, logger);
    await server.onApplicationBootstrap();
    expect(server.port).toBeUndefined();
    expect(() => server.url).toThrow(/serves no metrics port/);
    await server.onApplicationShutdown();
  });

  it('refuses to start on a port already taken, so the app fails to start rather than serve no metrics', async () => {
    const first = new MetricsServer('crew-api', new AppMetrics('crew-api'), 0, logger);
    await first.onApplicationBootstrap();
    try {
      const second = new MetricsServer('crew-api', new AppMetrics('crew-api'), first.port, logger);
      await expect(second.onApplicationBootstrap()).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await first.onApplicationShutdown();
    }
  });
});

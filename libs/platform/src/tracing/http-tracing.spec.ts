import 'reflect-metadata';
import { Writable } from 'node:stream';
import { Controller, Get, Inject, Module, type DynamicModule } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import type { Logger } from 'pino';
import { BASE_CONFIG, loadConfig, TRACING_CONFIG } from '../config/config';
import { createHttpApp } from '../http/bootstrap';
import { RouteIndex } from '../http/route-index';
import { createLogger } from '../logging/logger';
import { APP_LOGGER, PlatformModule } from '../platform.module';
import { startTracing, stopTracing } from './tracing';

@Controller('probe')
class ProbeController {
  constructor(@Inject(APP_LOGGER) private readonly logger: Logger) {}

  @Get(':id')
  probe() {
    this.logger.info('inside the handler');
    return { ok: true };
  }
}

@Module({ controllers: [ProbeController] })
class ProbeModule {}

type Line = Record<string, unknown>;

async function probeApp(): Promise<{ app: NestFastifyApplication; lines: Line[] }> {
  const lines: Line[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Line);
      done();
    },
  });
  const logger = createLogger('probe', 'info', sink);
  const config = loadConfig(BASE_CONFIG, {
    PORT: '1',
    DOCS_URL: 'https://docs.test/docs',
    APP_ENV: 'sandbox',
  });
  const routes = new RouteIndex();
  const root: DynamicModule = {
    module: class ProbeRoot {},
    imports: [PlatformModule.forRoot({ app: 'probe', config, logger, routes }), ProbeModule],
  };
  const app = await createHttpApp(root, { app: 'probe', logger, routes, config });
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  lines.length = 0;
  return { app, lines };
}

const access = (lines: Line[]) => lines.find((l) => l.msg === 'request completed');
const inside = (lines: Line[]) => lines.find((l) => l.msg === 'inside the handler');

describe('HTTP request span and log lines', () => {
  it('with tracing off, neither the access line nor the handler lines carry trace ids', async () => {
    const { app, lines } = await probeApp();
    const res = await app.inject({ method: 'GET', url: '/probe/7' });
    expect(res.statusCode).toBe(200);
    expect(access(lines)).toEqual(expect.objectContaining({ status: 200, path: '/probe/7' }));
    expect(access(lines)).not.toHaveProperty('trace_id');
    expect(inside(lines)).not.toHaveProperty('trace_id');
    await app.close();
  });

  describe('with tracing on', () => {
    const exporter = new InMemorySpanExporter();
    let probe: Awaited<ReturnType<typeof probeApp>>;

    beforeAll(async () => {
      await startTracing('probe', loadConfig(TRACING_CONFIG, {}), {
        spanProcessor: new SimpleSpanProcessor({ exporter }),
      });
      probe = await probeApp();
    });

    afterAll(async () => {
      await probe.app.close();
      await stopTracing();
    });

    beforeEach(() => {
      exporter.reset();
      probe.lines.length = 0;
    });

    it("continues the caller's trace, names the span by route pattern, and logs its ids on every line", async () => {
      const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
      const res = await probe.app.inject({
        method: 'GET',
        url: '/probe/42?x=1',
        headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
      });
      expect(res.statusCode).toBe(200);
      // Nothing of the trace goes back to the caller.
      expect(Object.keys(res.headers).filter((h) => /trace/i.test(h))).toEqual([]);

      const [span] = exporter.getFinishedSpans();
      expect(span.name).toBe('GET /probe/:id');
      expect(span.spanContext().traceId).toBe(traceId);
      expect(span.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
      expect(span.attributes).toMatchObject({ 'http.route': '/probe/:id', 'http.response.status_code': 200 });

      const ids = { trace_id: traceId, span_id: span.spanContext().spanId };
      expect(access(probe.lines)).toEqual(expect.objectContaining({ status: 200, ...ids }));
      expect(inside(probe.lines)).toEqual(expect.objectContaining(ids));
    });

    it('starts a trace when the caller sends none, and names an unmatched request by its method', async () => {
      await probe.app.inject({ method: 'GET', url: '/probe/1' });
      await probe.app.inject({ method: 'GET', url: '/nowhere' });
      const [matched, unmatched] = exporter.getFinishedSpans();
      expect(matched.parentSpanContext).toBeUndefined();
      expect(access(probe.lines)?.trace_id).toBe(matched.spanContext().traceId);
      expect(unmatched.name).toBe('GET');
      expect(unmatched.attributes['http.response.status_code']).toBe(404);
    });
  });
});

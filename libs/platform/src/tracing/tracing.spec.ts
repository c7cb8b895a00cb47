import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { trace, type ProxyTracerProvider } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { ConfigError, loadConfig, TRACING_CONFIG } from '../config/config';
import { createLogger } from '../logging/logger';
import { requestContext } from '../logging/logger';
import {
  activeSpanIds,
  inSpan,
  resourceAttributes,
  startTracing,
  stopTracing,
  traceHeaders,
  tracingEnabled,
} from './tracing';

const OFF = loadConfig(TRACING_CONFIG, {});

function capture() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger('test', 'info', sink), lines };
}

/** The provider behind the API's global proxy: a real one only once something registered it. */
function registeredProvider(): unknown {
  return (trace.getTracerProvider() as ProxyTracerProvider).getDelegate();
}

afterEach(() => stopTracing());

describe('tracing configuration', () => {
  it('is off by default, sampling parent-based always-on as the specification says once it is on', () => {
    expect(OFF).toEqual({
      OTEL_EXPORTER_OTLP_ENDPOINT: undefined,
      OTEL_SERVICE_NAME: undefined,
      OTEL_RESOURCE_ATTRIBUTES: {},
      OTEL_TRACES_SAMPLER: 'parentbased_always_on',
      OTEL_TRACES_SAMPLER_ARG: 1,
    });
  });

  it('reads the standard variables and drops a trailing slash of the endpoint', () => {
    expect(
      loadConfig(TRACING_CONFIG, {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
        OTEL_TRACES_SAMPLER: 'traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.01',
      }),
    ).toEqual({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_SERVICE_NAME: undefined,
      OTEL_RESOURCE_ATTRIBUTES: {},
      OTEL_TRACES_SAMPLER: 'traceidratio',
      OTEL_TRACES_SAMPLER_ARG: 0.01,
    });
  });

  it('reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (key=value pairs, percent-decoded)', () => {
    expect(
      loadConfig(TRACING_CONFIG, {
        OTEL_SERVICE_NAME: ' crew-api-canary ',
        OTEL_RESOURCE_ATTRIBUTES:
          'k8s.pod.name=crew-api-7d9f-x2,k8s.namespace.name=crew-records, team = crew%2Crecords%3Dops',
      }),
    ).toEqual(
      expect.objectContaining({
        OTEL_SERVICE_NAME: 'crew-api-canary',
        OTEL_RESOURCE_ATTRIBUTES: {
          'k8s.pod.name': 'crew-api-7d9f-x2',
          'k8s.namespace.name': 'crew-records',
          team: 'crew,records=ops',
        },
      }),
    );
    for (const bad of ['k8s.pod.name', '=x', 'a=1,,b=2', 'a b=1', 'a=%zz']) {
      let caught: unknown;
      try {
        loadConfig(TRACING_CONFIG, { OTEL_RESOURCE_ATTRIBUTES: bad });
      } catch (err) {
        caught = err;
      }
      expect({
        bad,
        variables: (caught as ConfigError | undefined)?.problems.map((p) => p.variable),
      }).toEqual({
        bad,
        variables: ['OTEL_RESOURCE_ATTRIBUTES'],
      });
    }
  });

  it('refuses an unknown sampler, a ratio outside 0..1 and an endpoint that is not an http URL', () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317',
      OTEL_TRACES_SAMPLER: 'parentbased_sometimes',
      OTEL_TRACES_SAMPLER_ARG: '1.5',
    };
    expect(() => loadConfig(TRACING_CONFIG, env)).toThrow(ConfigError);
    try {
      loadConfig(TRACING_CONFIG, env);
    } catch (err) {
      expect((err as ConfigError).problems.map((p) => p.variable)).toEqual([
        'OTEL_EXPORTER_OTLP_ENDPOINT',
        'OTEL_TRACES_SAMPLER',
        'OTEL_TRACES_SAMPLER_ARG',
      ]);
      expect((err as ConfigError).message).toContain(
        'OTEL_TRACES_SAMPLER must be one of always_on, always_off, traceidratio, parentbased_always_on',
      );
    }
  });
});

describe('tracing off', () => {
  it('registers no tracer provider when OTEL_EXPORTER_OTLP_ENDPOINT is unset', async () => {
    expect(await startTracing('test', OFF)).toBe(false);
    expect(tracingEnabled()).toBe(false);
    expect(registeredProvider()).not.toHaveProperty('forceFlush');
    let ran = false;
    await inSpan('work', {}, async (span) => {
      expect(span).toBeUndefined();
      ran = true;
    });
    expect(ran).toBe(true);
    expect(traceHeaders()?.traceparent).toBeUndefined();
  });

  it('logs no trace ids', () => {
    const { logger, lines } = capture();
    requestContext.run({ requestId: 'req_x' }, () => logger.info('handled'));
    expect(lines[0]).toEqual(expect.objectContaining({ request_id: 'req_x' }));
    expect(lines[0]).not.toHaveProperty('trace_id');
  });
});

describe('tracing on', () => {
  it('registers the provider and puts the active span ids on every log line', async () => {
    const exporter = new InMemorySpanExporter();
    expect(await startTracing('test', OFF, { spanProcessor: new SimpleSpanProcessor({ exporter }) })).toBe(
      true,
    );
    expect(registeredProvider()).toHaveProperty('forceFlush');
    const { logger, lines } = capture();
    logger.info('outside');
    let ids: ReturnType<typeof activeSpanIds>;
    await inSpan('work', {}, async () => {
      ids = activeSpanIds();
      requestContext.run({ requestId: 'req_y' }, () => logger.info('inside'));
      expect(traceHeaders()?.traceparent).toBe(`00-${ids?.trace_id}-${ids?.span_id}-01`);
    });
    expect(lines[0]).not.toHaveProperty('trace_id');
    expect(ids?.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(lines[1]).toEqual(
      expect.objectContaining({ request_id: 'req_y', trace_id: ids?.trace_id, span_id: ids?.span_id }),
    );
    const [span] = exporter.getFinishedSpans();
    expect(span.name).toBe('work');
    expect(span.spanContext().traceId).toBe(ids?.trace_id);
    expect(span.resource.attributes['service.name']).toBe('test');
  });

  it('describes the process on every span: app, version, environment, host; the OTel variables win', async () => {
    const exporter = new InMemorySpanExporter();
    const version = (
      JSON.parse(readFileSync(join(__dirname, '../../../../package.json'), 'utf8')) as {
        version: string;
      }
    ).version;
    await startTracing(
      'crew-api',
      {
        ...loadConfig(TRACING_CONFIG, {
          OTEL_RESOURCE_ATTRIBUTES: 'k8s.pod.name=crew-api-7d9f-x2,deployment.environment.name=staging',
        }),
        APP_ENV: 'production',
      },
      { spanProcessor: new SimpleSpanProcessor({ exporter }) },
    );
    await inSpan('work', {}, async () => undefined);
    const [span] = exporter.getFinishedSpans();
    expect(span.resource.attributes).toEqual(
      expect.objectContaining({
        'service.name': 'crew-api',
        'service.version': version,
        'host.name': hostname(),
        'k8s.pod.name': 'crew-api-7d9f-x2',
        // OTEL_RESOURCE_ATTRIBUTES over the default (APP_ENV).
        'deployment.environment.name': 'staging',
      }),
    );
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('names the service OTEL_SERVICE_NAME over OTEL_RESOURCE_ATTRIBUTES over the app, and the environment APP_ENV', () => {
    const config = (env: Record<string, string>) => ({
      ...loadConfig(TRACING_CONFIG, env),
      APP_ENV: 'sandbox',
    });
    expect(resourceAttributes('crew-api', config({}))).toEqual(
      expect.objectContaining({ 'service.name': 'crew-api', 'deployment.environment.name': 'sandbox' }),
    );
    expect(
      resourceAttributes('crew-api', config({ OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-attributes' }))[
        'service.name'
      ],
    ).toBe('from-attributes');
    expect(
      resourceAttributes(
        'crew-api',
        config({ OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-attributes', OTEL_SERVICE_NAME: 'from-name' }),
      )['service.name'],
    ).toBe('from-name');
  });

  it('samples by OTEL_TRACES_SAMPLER: always_off records nothing', async () => {
    const exporter = new InMemorySpanExporter();
    await startTracing(
      'test',
      { ...OFF, OTEL_TRACES_SAMPLER: 'always_off' },
      { spanProcessor: new SimpleSpanProcessor({ exporter }) },
    );
    await inSpan('work', {}, async () => undefined);
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});

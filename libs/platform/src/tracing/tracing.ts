import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import {
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { SpanProcessor } from '@opentelemetry/sdk-trace';
import type { ConfigOf, TRACING_CONFIG } from '../config/config';

export type TracingConfig = ConfigOf<typeof TRACING_CONFIG> & {
  /** The environment (every app's config has it): the spans' `deployment.environment.name`. */
  readonly APP_ENV?: string;
};

/** The version of the service this process runs: the repository's package.json, next to dist/ in the images. */
function serviceVersion(): string | undefined {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'crew-record-service') return pkg.version;
    } catch {
      /* no package.json here, or not ours: keep going up */
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** Every span's resource: app, release, APP_ENV and host, then OTEL_RESOURCE_ATTRIBUTES, then OTEL_SERVICE_NAME (the spec's order). */
export function resourceAttributes(app: string, config: TracingConfig): Record<string, string> {
  const defaults: Record<string, string> = { 'service.name': app, 'host.name': hostname() };
  const version = serviceVersion();
  if (version) defaults['service.version'] = version;
  if (config.APP_ENV) defaults['deployment.environment.name'] = config.APP_ENV;
  return {
    ...defaults,
    ...config.OTEL_RESOURCE_ATTRIBUTES,
    ...(config.OTEL_SERVICE_NAME ? { 'service.name': config.OTEL_SERVICE_NAME } : {}),
  };
}

export { SpanKind, type Span };

interface Active {
  readonly tracer: Tracer;
  readonly provider: { forceFlush(): Promise<void>; shutdown(): Promise<void> };
  readonly disable: () => void;
}

/** Undefined while tracing is off: every helper returns at once, and the SDK is never loaded. */
let active: Active | undefined;

/**
 * Starts tracing when OTEL_EXPORTER_OTLP_ENDPOINT is set (or a processor given), before any client is made.
 * `spanProcessor` replaces the OTLP exporter and its batch processor (the tests' in-memory exporter).
 */
export async function startTracing(
  app: string,
  config: TracingConfig,
  options: { readonly spanProcessor?: SpanProcessor } = {},
): Promise<boolean> {
  if (active) return true;
  const endpoint = config.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (endpoint === undefined && options.spanProcessor === undefined) return false;
  const sdk = await import('@opentelemetry/sdk-trace');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const { W3CTraceContextPropagator } = await import('@opentelemetry/core');
  const { resourceFromAttributes } = await import('@opentelemetry/resources');
  const { PgInstrumentation } = await import('@opentelemetry/instrumentation-pg');
  const { IORedisInstrumentation } = await import('@opentelemetry/instrumentation-ioredis');

  let spanProcessor = options.spanProcessor;
  if (spanProcessor === undefined) {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    spanProcessor = new sdk.BatchSpanProcessor({
      exporter: new OTLPTraceExporter({ url: `${endpoint}/v1/traces` }),
    });
  }
  const ratio = config.OTEL_TRACES_SAMPLER_ARG;
  const root = {
    always_on: () => new sdk.AlwaysOnSampler(),
    always_off: () => new sdk.AlwaysOffSampler(),
    traceidratio: () => new sdk.TraceIdRatioBasedSampler(ratio),
    parentbased_always_on: () => new sdk.ParentBasedSampler({ root: new sdk.AlwaysOnSampler() }),
    parentbased_always_off: () => new sdk.ParentBasedSampler({ root: new sdk.AlwaysOffSampler() }),
    parentbased_traceidratio: () =>
      new sdk.ParentBasedSampler({ root: new sdk.TraceIdRatioBasedSampler(ratio) }),
  }[config.OTEL_TRACES_SAMPLER];
  const provider = new sdk.TracerProvider({
    resource: resourceFromAttributes(resourceAttributes(app, config)),
    sampler: root(),
    spanProcessors: [spanProcessor],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  // Each instrumentation hooks its module as it is made.
  const instrumentations = [
    // Only queries inside a traced operation: a relay's idle poll is not worth a trace of its own.
    new PgInstrumentation({ requireParentSpan: true }),
    // The command name only: the default text carries keys and arguments (token digests, client
    // ids, the limiter's arguments), which have no place in a tracing backend.
    new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
  ];
  for (const instrumentation of instrumentations) instrumentation.setTracerProvider(provider);
  // The platform's own imports loaded ioredis already; requiring it again now lets the
  // instrumentation patch the module every client is made from (pg is loaded later, by TypeORM).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require('ioredis');
  active = {
    tracer: provider.getTracer('@svc/platform'),
    provider,
    disable: () => {
      for (const instrumentation of instrumentations) instrumentation.disable();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
  return true;
}

const STOP_TIMEOUT_MS = 2000;

/** Sends the spans still buffered and stops the provider; a no-op when tracing is off. */
export async function stopTracing(): Promise<void> {
  const current = active;
  if (!current) return;
  active = undefined;
  // A collector that does not answer must not hold the shutdown past its deadline.
  let timer: NodeJS.Timeout | undefined;
  const giveUp = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, STOP_TIMEOUT_MS);
  });
  try {
    await Promise.race([current.provider.shutdown(), giveUp]);
  } finally {
    clearTimeout(timer);
    current.disable();
  }
}

export function tracingEnabled(): boolean {
  return active !== undefined;
}

/** The context carried by message or request headers (W3C `traceparent`/`tracestate`). */
export function contextFromHeaders(headers: Readonly<Record<string, unknown>> | undefined): Context {
  if (!active || !headers) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, headers, {
    keys: (carrier) => Object.keys(carrier),
    get: (carrier, key) => {
      const value = carrier[key];
      if (Buffer.isBuffer(value)) return value.toString('utf8');
      return typeof value === 'string' || Array.isArray(value) ? (value as string | string[]) : undefined;
    },
  });
}

/** `traceparent` (and `tracestate`) of `ctx` (the active context by default), for a message's headers. */
export function traceHeaders(ctx?: Context): Record<string, string> | undefined {
  if (!active) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(ctx ?? context.active(), carrier);
  return carrier.traceparent === undefined ? undefined : carrier;
}

/** The headers that make the receiver's span a child of `span`. */
export function spanHeaders(span: Span | undefined): Record<string, string> | undefined {
  return span && traceHeaders(trace.setSpan(context.active(), span));
}

/** The ids a log line carries while a span is active. */
export function activeSpanIds(): { trace_id: string; span_id: string } | undefined {
  if (!active) return undefined;
  const span = trace.getSpan(context.active());
  const ids = span?.spanContext();
  return ids && isSpanContextValid(ids) ? { trace_id: ids.traceId, span_id: ids.spanId } : undefined;
}

export interface SpanOptions {
  readonly kind?: SpanKind;
  readonly attributes?: Attributes;
  /** The parent; the active context when absent. */
  readonly parent?: Context;
}

/** Runs `fn` in a span of its own, ended when `fn` settles (an error status when it throws); with tracing off, as it is. */
export async function inSpan<T>(
  name: string,
  options: SpanOptions,
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  const span = startSpan(name, options);
  if (!span) return fn(undefined);
  try {
    return await context.with(trace.setSpan(options.parent ?? context.active(), span), () => fn(span));
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/** Starts a span the caller ends (one that outlives a callback, such as a request's). */
export function startSpan(name: string, options: SpanOptions): Span | undefined {
  if (!active) return undefined;
  const parent = options.parent ?? context.active();
  return active.tracer.startSpan(name, { kind: options.kind, attributes: options.attributes }, parent);
}

export function failSpan(span: Span | undefined, err: unknown): void {
  if (!span) return;
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

export function markSpanError(span: Span | undefined, message?: string): void {
  span?.setStatus({ code: SpanStatusCode.ERROR, message });
}

/** Each HTTP request's server span, until the request is answered. */
const requestSpans = new WeakMap<object, Span>();

/** Runs the rest of the request in its server span, continuing the caller's `traceparent`. */
export function enterRequestSpan(
  request: object,
  method: string,
  headers: IncomingHttpHeaders,
  next: () => void,
): void {
  if (!active) return next();
  const parent = contextFromHeaders(headers);
  const span = active.tracer.startSpan(
    method,
    { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } },
    parent,
  );
  requestSpans.set(request, span);
  context.with(trace.setSpan(parent, span), next);
}

/** Ends the request's span, named by route pattern (not member id); returns its ids for the access line. */
export function leaveRequestSpan(
  request: object,
  method: string,
  route: string | undefined,
  status: number,
): { trace_id: string; span_id: string } | undefined {
  const span = requestSpans.get(request);
  if (!span) return undefined;
  requestSpans.delete(request);
  if (route !== undefined) {
    span.updateName(`${method} ${route}`);
    span.setAttribute('http.route', route);
  }
  span.setAttribute('http.response.status_code', status);
  if (status >= 500) markSpanError(span);
  span.end();
  const ids = span.spanContext();
  return { trace_id: ids.traceId, span_id: ids.spanId };
}

import type { IncomingHttpHeaders } from 'node:http';
import {
  contextFromHeaders,
  markSpanError,
  SpanKind,
  startSpan,
  tracingEnabled,
  withSpan,
  type Span,
} from './tracing';

/**
 * The server span of each HTTP request: it continues the caller's trace (the gateway passes the
 * partner's `traceparent` on), and is named after the route pattern once routing knows it, e.g.
 * `GET /v1/me`, so that a trace groups by endpoint rather than by member id.
 */
export class HttpServerTracing {
  private readonly spans = new WeakMap<object, Span>();

  /** Undefined when tracing is off: the app then adds nothing to a request. */
  static create(): HttpServerTracing | undefined {
    return tracingEnabled() ? new HttpServerTracing() : undefined;
  }

  /** Starts the request's span and runs the rest of the request (`next`) inside it. */
  enter(request: object, method: string, headers: IncomingHttpHeaders, next: () => void): void {
    const parent = contextFromHeaders(headers);
    const span = startSpan(method, {
      kind: SpanKind.SERVER,
      parent,
      attributes: { 'http.request.method': method },
    });
    if (!span) return next();
    this.spans.set(request, span);
    withSpan(span, parent, next);
  }

  /** Ends the request's span; returns its ids for the access log line. */
  leave(
    request: object,
    method: string,
    route: string | undefined,
    status: number,
  ): { trace_id: string; span_id: string } | undefined {
    const span = this.spans.get(request);
    if (!span) return undefined;
    this.spans.delete(request);
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
}

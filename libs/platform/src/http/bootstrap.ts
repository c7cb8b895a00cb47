import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  DEFAULT_BODY_LIMIT_BYTES,
  findGatewayRoute,
  PROBLEM_CONTENT_TYPE,
  REQUEST_ID_PATTERN,
} from '@svc/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomFillSync } from 'node:crypto';
import type { Server, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { ReadinessRegistry } from '../health/readiness';
import { NestPinoLogger, requestContext } from '../logging/logger';
import { AppMetrics } from '../metrics/app-metrics';
import { enterRequestSpan, leaveRequestSpan, stopTracing, tracingEnabled } from '../tracing/tracing';
import { ApiProblem } from './problem';
import { ProblemDetailsFilter, type ErrorRenderer } from './problem-details.filter';
import { problemBody, type DomainErrorMapper } from './problem-response';
import type { RouteIndex } from './route-index';

const ID_BYTES = 12;
/** Random bytes for 256 ids, drawn at once: one draw per request cost ~3 % of a busy API's CPU. */
const pool = Buffer.alloc(ID_BYTES * 256);
let offset = pool.length;

export function newRequestId(): string {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const id = pool.toString('base64url', offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return `req_${id}`;
}

/** docs/rules.md: keep a well-formed incoming id (the gateway's, usually), replace anything else. */
export function pickRequestId(incoming: string | string[] | undefined): string {
  const value = Array.isArray(incoming) ? incoming[0] : incoming;
  return value !== undefined && REQUEST_ID_PATTERN.test(value) ? value : newRequestId();
}

export interface HttpAppOptions {
  readonly app: string;
  readonly logger: Logger;
  readonly routes: RouteIndex;
  readonly config: {
    readonly PORT: number;
    readonly DOCS_URL: string;
    readonly SHUTDOWN_DELAY_MS: number;
    readonly SHUTDOWN_TIMEOUT_MS: number;
  };
  readonly mapDomainError?: DomainErrorMapper;
  readonly renderError?: ErrorRenderer;
  /** Accept `application/x-www-form-urlencoded` bodies (OAuth endpoints and HTML forms). */
  readonly formBodies?: boolean;
}

/** A Nest app on Fastify with request ids, access logs, Problem Details for every error, 404/405/413/415. */
export async function createHttpApp(
  module: unknown,
  options: HttpAppOptions,
): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    logger: false,
    bodyLimit: DEFAULT_BODY_LIMIT_BYTES,
    trustProxy: true,
    genReqId: (req: { headers: Record<string, string | string[] | undefined> }) =>
      pickRequestId(req.headers['x-request-id']),
    // runHttpApp closes the listener and waits for every connection to end before Fastify closes,
    // so nothing arrives while it does; a request that still did is served, not refused with 503.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    // Errors met before routing get the app's error shape too, never Fastify's JSON echoing the
    // path. (Typed loosely: Nest's adapter brings its own copy of Fastify's types.)
    frameworkErrors: (error: { code?: string }, request: { id: string }, reply: { raw: ServerResponse }) => {
      const problem =
        error.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? new ApiProblem('not_found', 'Nothing is served at this path: a path segment is too long.')
          : new ApiProblem('bad_request', 'The request URL is malformed.');
      if (options.renderError?.(error, problem, request as FastifyRequest, reply as FastifyReply)) return;
      const body = JSON.stringify(problemBody(problem, options.config.DOCS_URL, request.id));
      reply.raw
        .writeHead(problem.status, {
          'content-type': PROBLEM_CONTENT_TYPE,
          'content-length': Buffer.byteLength(body),
          'x-request-id': request.id,
        })
        .end(body);
    },
  });
  const fastify = adapter.getInstance();
  fastify.addHook('onRoute', (route) => {
    options.routes.add(route.method, route.url);
    // A route the gateway lets carry a larger body (reconcile: 5 MiB) gets the same ceiling here.
    const larger = findGatewayRoute(route.url)?.bodyLimitBytes;
    if (larger !== undefined && route.bodyLimit === undefined) route.bodyLimit = larger;
  });
  // Tracing starts before the app is built (serveApp), so an app without it never calls into it.
  const traced = tracingEnabled();
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    const rest = () => requestContext.run({ requestId: request.id }, done);
    if (traced) enterRequestSpan(request, request.method, request.headers, rest);
    else rest();
  });
  // The access line holds only the fields below, none of them secret (the path is logged without
  // its query), so it skips the redaction pass, most of what a line would cost.
  const accessLog = options.logger.child({}, { redact: [] });
  // Known once Nest has built the app's modules (PlatformModule provides them); requests come later.
  const built: { metrics?: AppMetrics; readiness?: ReadinessRegistry } = {};
  fastify.addHook('onResponse', (request, reply, done) => {
    built.metrics?.observeHttp(
      request.method,
      request.routeOptions.url,
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    const ids = traced
      ? leaveRequestSpan(request, request.method, request.routeOptions.url, reply.statusCode)
      : undefined;
    accessLog.info(
      {
        method: request.method,
        path: request.url.split('?')[0],
        status: reply.statusCode,
        duration_ms: Math.round(reply.elapsedTime),
        ...ids,
      },
      'request completed',
    );
    done();
  });
  // Draining: every answer closes its connection, and says so, so the gateway sends nothing more on
  // it; the app never closes a kept-alive connection a request may be on its way to.
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    if (built.readiness?.draining) reply.header('connection', 'close');
    done(null, payload);
  });
  // A JSON API refuses text/plain bodies with 415 rather than handing controllers a string.
  fastify.removeContentTypeParser('text/plain');
  // JSON text is UTF-8 (RFC 8259 §8.1): Fastify's parser would store a bad byte as U+FFFD, so a
  // body that is not UTF-8 is refused whole (400). A strict decoder checks and decodes in one pass
  // (~10 % on a 3 MiB reconcile body); parsing stays Fastify's (its prototype guards).
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    let text: string;
    try {
      text = strictUtf8.decode(body as Buffer);
    } catch {
      return done(
        new ApiProblem('bad_request', 'The request body is not valid UTF-8 (RFC 8259 §8.1).'),
        undefined,
      );
    }
    // Fastify's default parser answers through `done`, synchronously.
    void parseJson(request, text, done);
  });
  if (options.formBodies) {
    fastify.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string' },
      (_req, body, done) => {
        // A repeated field becomes an array, so a handler can refuse it (RFC 6749 §3.1).
        const fields: Record<string, string | string[]> = {};
        for (const [name, value] of new URLSearchParams(body as string)) {
          const seen = fields[name];
          fields[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
        }
        done(null, fields);
      },
    );
  }

  const app = await NestFactory.create<NestFastifyApplication>(module as never, adapter, {
    logger: new NestPinoLogger(options.logger),
    abortOnError: false,
    // Fastify's own JSON parser stays; Nest's would add a form parser to every app.
    bodyParser: false,
  });
  built.metrics = app.get(AppMetrics, { strict: false });
  built.readiness = app.get(ReadinessRegistry, { strict: false });
  app.useGlobalFilters(
    new ProblemDetailsFilter(
      options.config.DOCS_URL,
      options.routes,
      options.logger,
      options.mapDomainError,
      options.renderError,
    ),
  );
  return app;
}

/**
 * Listens, and on SIGTERM/SIGINT drains without failing a request: readiness turns 503 and answers
 * carry `Connection: close`; after SHUTDOWN_DELAY_MS the listener closes (nginx retries refused
 * connections elsewhere, POSTs included) and in-flight requests finish; then the shutdown hooks
 * run with no request left. Overrunning SHUTDOWN_TIMEOUT_MS exits non-zero.
 */
export async function runHttpApp(app: NestFastifyApplication, options: HttpAppOptions): Promise<void> {
  await app.startAllMicroservices();
  await app.listen({ port: options.config.PORT, host: '0.0.0.0' });
  options.logger.info({ port: options.config.PORT }, `${options.app} listening`);

  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    options.logger.info({ signal }, `${options.app} draining`);
    app.get(ReadinessRegistry).startDraining();
    setTimeout(() => {
      options.logger.error(`${options.app} did not drain within ${options.config.SHUTDOWN_TIMEOUT_MS} ms`);
      process.exit(1);
    }, options.config.SHUTDOWN_TIMEOUT_MS).unref();
    await new Promise((resolve) => setTimeout(resolve, options.config.SHUTDOWN_DELAY_MS));
    try {
      await closeListener(app.getHttpServer() as Server);
      options.logger.info(`${options.app} stopped accepting; no request in flight`);
      await app.close();
      await stopTracing();
      options.logger.info(`${options.app} stopped`);
      process.exit(0);
    } catch (err) {
      options.logger.error({ err }, `${options.app} failed to stop cleanly`);
      process.exit(1);
    }
  };
  process.once('SIGTERM', (s) => void stop(s));
  process.once('SIGINT', (s) => void stop(s));
}

/** Stops accepting; resolves once every connection has ended (busy ones after their answer). */
function closeListener(server: Server): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise((resolve, reject) => {
    // An answer written without `Connection: close` (its request was answered by a raw reply)
    // leaves an idle connection behind: those are closed as they appear.
    const sweep = setInterval(() => server.closeIdleConnections(), 250);
    server.close((err) => {
      clearInterval(sweep);
      if (err) reject(err);
      else resolve();
    });
    server.closeIdleConnections();
  });
}

import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { DEFAULT_BODY_LIMIT_BYTES, findGatewayRoute, PROBLEM_CONTENT_TYPE } from '@svc/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Server, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { ReadinessRegistry } from '../health/readiness';
import { NestPinoLogger } from '../logging/logger';
import { AppMetrics } from '../metrics/app-metrics';
import { requestContext } from '../logging/request-context';
import { HttpServerTracing } from '../tracing/http-tracing';
import { stopTracing } from '../tracing/tracing';
import { ApiProblem } from './problem';
import { ProblemDetailsFilter, type ErrorRenderer } from './problem-details.filter';
import { problemBody, type DomainErrorMapper } from './problem-response';
import { pickRequestId } from './request-id';
import type { RouteIndex } from './route-index';

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

/**
 * Builds a Nest app on Fastify with the platform's HTTP behaviour: request ids, JSON logs per
 * request, Problem Details for every error, 404/405 for unknown routes, 413/415 for bodies.
 */
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
    // Errors Fastify meets before routing (a path parameter over its length cap, a malformed URL)
    // get the app's error shape too (Problem Details, or the app's renderer: RFC 6749 JSON on
    // /oauth/*, an HTML page in consent-ui), never Fastify's own JSON, and never echo the path.
    // (Typed loosely: Nest's adapter brings its own copy of Fastify's types.)
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
  const tracing = HttpServerTracing.create();
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    if (!tracing) return requestContext.run({ requestId: request.id }, done);
    tracing.enter(request, request.method, request.headers, () =>
      requestContext.run({ requestId: request.id }, done),
    );
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
    const ids = tracing?.leave(request, request.method, request.routeOptions.url, reply.statusCode);
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
  // JSON text is UTF-8 (RFC 8259 §8.1). Fastify's own parser decodes a bad byte to U+FFFD, which
  // an app would then store as if the client had sent it: a body that is not UTF-8 is refused
  // whole (400), before any handler runs. Parsing itself stays Fastify's (its prototype guards).
  // One pass decodes and checks (a strict decoder), not a check and then a decode: ~10 % on a 3 MiB
  // reconcile body, where isUtf8 plus toString cost a third more than Fastify's own parser.
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
 * Listens, and on SIGTERM/SIGINT drains without failing a request:
 *   1. readiness turns 503 at once (Kubernetes takes the pod out of its Service), and every answer
 *      from now on carries `Connection: close`, so kept-alive connections end after their request;
 *   2. for SHUTDOWN_DELAY_MS the app keeps serving (endpoints and load balancers catch up);
 *   3. the listener closes: new connections are refused (nginx sends those requests to another
 *      replica, POSTs included, since nothing was sent), idle connections are closed, requests
 *      in flight finish and their connections close;
 *   4. then the app's shutdown hooks run with no request left: message consumers are cancelled and
 *      their handlers finish, the outbox relay finishes its batch, connections to PostgreSQL,
 *      Redis and RabbitMQ close.
 * A shutdown that overruns SHUTDOWN_TIMEOUT_MS exits non-zero.
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
    const deadline = setTimeout(() => {
      options.logger.error(`${options.app} did not drain within ${options.config.SHUTDOWN_TIMEOUT_MS} ms`);
      process.exit(1);
    }, options.config.SHUTDOWN_TIMEOUT_MS);
    deadline.unref();
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

/**
 * Stops accepting and resolves once every connection has ended: idle ones are closed at once
 * (Node's close()), busy ones after their answer (`Connection: close` while draining).
 */
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

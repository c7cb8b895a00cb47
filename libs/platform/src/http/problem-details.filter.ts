import { PROBLEM_CONTENT_TYPE } from '@svc/contracts';
import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { ApiProblem } from './problem';
import { problemBody, toProblem, type DomainErrorMapper } from './problem-response';
import type { RouteIndex } from './route-index';

/** Answers an error in a surface's own shape (RFC 6749 on `/oauth/*`, HTML); false leaves it to the filter. */
export type ErrorRenderer = (
  error: unknown,
  problem: ApiProblem,
  request: FastifyRequest,
  reply: FastifyReply,
) => boolean;

/** The one place where an HTTP error becomes an answer: Problem Details for every app. */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  constructor(
    private readonly docsUrl: string,
    private readonly routes: RouteIndex,
    private readonly logger: Logger,
    private readonly mapDomainError?: DomainErrorMapper,
    private readonly renderError?: ErrorRenderer,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw exception;
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const path = request.url.split('?')[0];
    const { problem, logAsError } = toProblem(
      exception,
      { method: request.method, path },
      this.routes,
      this.mapDomainError,
    );
    if (logAsError) {
      this.logger.error(
        { err: exception, method: request.method, path },
        'request failed with an unexpected error',
      );
    }
    if (reply.sent) return;
    if (this.renderError?.(exception, problem, request, reply)) return;
    reply.status(problem.status);
    for (const [name, value] of Object.entries(problem.extras.headers ?? {})) reply.header(name, value);
    reply.header('x-request-id', request.id);
    reply.header('content-type', PROBLEM_CONTENT_TYPE);
    reply.header('cache-control', 'no-store');
    void reply.send(JSON.stringify(problemBody(problem, this.docsUrl, request.id)));
  }
}

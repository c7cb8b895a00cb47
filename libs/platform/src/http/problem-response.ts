import { PROBLEMS, problemType, type ProblemBody, type ProblemCode } from '@svc/contracts';
import { HttpException, HttpStatus } from '@nestjs/common';
import { ApiProblem, DependencyUnavailableError } from './problem';
import type { RouteIndex } from './route-index';
import { isDatabaseUnreachable } from '../database/unreachable';

/** Anything an app can map its own exceptions with; undefined means "not mine". */
export type DomainErrorMapper = (error: unknown) => ApiProblem | undefined;

export interface ProblemContext {
  readonly method: string;
  readonly path: string;
}

/** Errors raised before a controller runs (Fastify's body parsing, limits), and PostgreSQL's 22021. */
function fromErrorCode(error: unknown): ApiProblem | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  switch (code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiProblem('payload_too_large', 'The request body exceeds the size limit of this endpoint.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiProblem(
        'unsupported_media_type',
        'This endpoint does not accept the request Content-Type.',
      );
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiProblem('bad_request', 'The request body is not valid JSON.');
    case '22021':
      // PostgreSQL refuses a NUL character in text. Input that carries one is the client's
      // mistake wherever it slipped past validation: a 400, never a 500.
      return new ApiProblem('bad_request', 'The request contains a character that cannot be stored (NUL).');
    default:
      if (error instanceof SyntaxError && /JSON/.test(error.message)) {
        return new ApiProblem('bad_request', 'The request body is not valid JSON.');
      }
      return undefined;
  }
}

function fromHttpException(error: HttpException, ctx: ProblemContext, routes: RouteIndex): ApiProblem {
  const status = error.getStatus();
  if (status === HttpStatus.NOT_FOUND) {
    const allowed = routes.allowedMethods(ctx.path);
    if (allowed.length > 0 && !allowed.includes(ctx.method)) {
      return new ApiProblem('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}.`, {
        headers: { allow: allowed.join(', ') },
      });
    }
    return new ApiProblem('not_found', `Nothing is served at ${ctx.path}.`);
  }
  const byStatus: Partial<Record<number, ProblemCode>> = {
    400: 'bad_request',
    401: 'invalid_token',
    403: 'insufficient_scope',
    405: 'method_not_allowed',
    409: 'conflict',
    413: 'payload_too_large',
    415: 'unsupported_media_type',
    422: 'invalid_request',
    429: 'rate_limit_exceeded',
    503: 'service_unavailable',
  };
  const code = byStatus[status] ?? 'internal_error';
  return new ApiProblem(code, code === 'internal_error' ? 'An unexpected error occurred.' : error.message);
}

/** The problem an error no feature mapped stands for: `internal_error` for the unforeseen. */
function classify(error: unknown, ctx: ProblemContext, routes: RouteIndex): ApiProblem {
  if (error instanceof DependencyUnavailableError) {
    return new ApiProblem(
      'service_unavailable',
      'A dependency of this service is unavailable; retry with backoff.',
    );
  }
  if (isDatabaseUnreachable(error)) {
    return new ApiProblem('service_unavailable', 'The database is unavailable; retry with backoff.');
  }
  const problem = fromErrorCode(error);
  if (problem) return problem;
  if (error instanceof HttpException) return fromHttpException(error, ctx, routes);
  return new ApiProblem('internal_error', 'An unexpected error occurred.');
}

/** Any error as a Problem; `logAsError` for the unanticipated (a 500) and an unreachable database (503). */
export function toProblem(
  error: unknown,
  ctx: ProblemContext,
  routes: RouteIndex,
  mapDomainError?: DomainErrorMapper,
): { problem: ApiProblem; logAsError: boolean } {
  const known = error instanceof ApiProblem ? error : mapDomainError?.(error);
  if (known) return { problem: known, logAsError: false };
  const problem = classify(error, ctx, routes);
  return { problem, logAsError: problem.code === 'internal_error' || isDatabaseUnreachable(error) };
}

export function problemBody(problem: ApiProblem, docsUrl: string, requestId: string): ProblemBody {
  return {
    type: problemType(docsUrl, problem.code),
    title: PROBLEMS[problem.code].title,
    status: problem.status,
    detail: problem.detail,
    instance: requestId,
    ...(problem.extras.errors ? { errors: problem.extras.errors } : {}),
  };
}

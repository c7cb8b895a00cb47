import { PROBLEMS, type FieldError, type ProblemCode } from '@svc/contracts';

/** An answer in Problem Details form (RFC 7807); apps map their features' exceptions to it in one place. */
export class ApiProblem extends Error {
  readonly status: number;
  constructor(
    readonly code: ProblemCode,
    readonly detail: string,
    readonly extras: { errors?: readonly FieldError[]; headers?: Readonly<Record<string, string>> } = {},
  ) {
    super(detail);
    this.name = 'ApiProblem';
    this.status = PROBLEMS[code].status;
  }
}

/** Request validation failed (422 `invalid_request`, one entry per field). */
export class ValidationProblem extends ApiProblem {
  constructor(errors: readonly FieldError[], detail = 'The request has invalid fields; see `errors`.') {
    super('invalid_request', detail, { errors });
  }
}

/** A dependency did not answer in time: 503 `service_unavailable`, so callers retry rather than hang. */
export class DependencyUnavailableError extends Error {
  constructor(
    readonly dependency: string,
    cause?: unknown,
  ) {
    super(`${dependency} is unavailable`, { cause });
    this.name = 'DependencyUnavailableError';
  }
}

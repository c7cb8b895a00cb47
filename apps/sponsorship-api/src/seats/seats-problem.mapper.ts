import { ApiProblem, assertUnreachable, ValidationProblem } from '@svc/platform';
import { SeatsException } from './seats.exception';

/** The one place where a seat error becomes an HTTP answer (RFC 7807 Problem Details). */
export function seatsProblem(error: unknown): ApiProblem | undefined {
  if (!(error instanceof SeatsException)) return undefined;
  switch (error.code) {
    case 'seat_not_found':
      return new ApiProblem('not_found', error.message);
    case 'external_ref_taken':
      return new ApiProblem('conflict', error.message);
    case 'quota_exceeded':
      return new ApiProblem('seat_quota_exceeded', error.message);
    case 'entitlement_write_failed':
      return new ApiProblem('entitlement_write_failed', error.message);
    case 'invalid_cursor':
      return new ValidationProblem([{ field: 'cursor', message: error.message }]);
    case 'probe_budget_exceeded':
      // RFC 6585 §4: 429 with Retry-After (RFC 9110 §10.2.3) in seconds.
      return new ApiProblem('rate_limit_exceeded', error.message, {
        headers: { 'retry-after': String(error.retryAfterSeconds ?? 1) },
      });
    case 'empty_active_refs':
    case 'member_not_identified':
      return new ApiProblem('bad_request', error.message);
    default:
      return assertUnreachable(error.code);
  }
}

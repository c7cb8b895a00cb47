import { ApiProblem, assertUnreachable, ValidationProblem } from '@svc/platform';
import { RecordsException } from '../records/records.exception';
import { WebhookNotRegisteredException } from '../webhooks/webhook-test.exception';

/** The one place where a crew-record error becomes an HTTP answer (RFC 7807 Problem Details). */
export function recordsProblem(error: unknown): ApiProblem | undefined {
  if (error instanceof WebhookNotRegisteredException)
    return new ApiProblem('webhook_not_registered', error.message);
  if (!(error instanceof RecordsException)) return undefined;
  switch (error.code) {
    case 'member_not_found':
    case 'period_not_found':
      return new ApiProblem('not_found', error.message);
    case 'member_exists':
      return new ApiProblem('conflict', error.message);
    case 'invalid_cursor':
      return new ValidationProblem([{ field: 'cursor', message: error.message }]);
    case 'invalid_period':
      return new ValidationProblem([{ field: 'period_end', message: error.message }]);
    default:
      return assertUnreachable(error.code);
  }
}

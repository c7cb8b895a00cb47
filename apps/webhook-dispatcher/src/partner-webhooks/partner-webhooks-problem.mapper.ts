import { ApiProblem, assertUnreachable, ValidationProblem } from '@svc/platform';
import { PartnerWebhooksException } from './partner-webhooks.exception';

/** The one place where a partner-webhooks error becomes an HTTP answer (RFC 7807 Problem Details). */
export function partnerWebhooksProblem(error: unknown): ApiProblem | undefined {
  if (!(error instanceof PartnerWebhooksException)) return undefined;
  switch (error.code) {
    case 'delivery_not_found':
      return new ApiProblem('not_found', error.message);
    case 'webhook_not_registered':
      return new ApiProblem('webhook_not_registered', error.message);
    case 'still_retrying':
    case 'endpoint_disabled':
      return new ApiProblem('conflict', error.message);
    case 'replay_budget_exceeded':
    case 'redelivery_budget_exceeded':
    case 'endpoint_check_budget_exceeded':
      // RFC 6585 §4: 429 with Retry-After (RFC 9110 §10.2.3) in seconds.
      return new ApiProblem('rate_limit_exceeded', error.message, {
        headers: { 'retry-after': String(error.retryAfterSeconds ?? 1) },
      });
    case 'invalid_cursor':
      return new ValidationProblem([{ field: 'cursor', message: error.message }]);
    default:
      return assertUnreachable(error.code);
  }
}

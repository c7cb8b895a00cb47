import { DomainException } from '@svc/platform';

export type PartnerWebhooksErrorCode =
  | 'delivery_not_found'
  | 'webhook_not_registered'
  | 'still_retrying'
  | 'endpoint_disabled'
  | 'replay_budget_exceeded'
  | 'redelivery_budget_exceeded'
  | 'endpoint_check_budget_exceeded'
  | 'invalid_cursor';

/** What a partner asked of its webhooks cannot be done; partner-webhooks-problem.mapper answers it. */
export class PartnerWebhooksException extends DomainException<PartnerWebhooksErrorCode> {
  constructor(
    code: PartnerWebhooksErrorCode,
    message: string,
    /** Only for the `…_budget_exceeded` codes. */
    readonly retryAfterSeconds?: number,
  ) {
    super(code, message);
  }
}

import type { EventType } from '../../messaging';
import { EVENT_TYPES } from '../../messaging';
import { readOneOf, readOptionalString, readRecord, readString, readStringArray } from '../../validate';
import { ContractViolation, RPC_QUEUES, type RpcContract } from '../rpc';

/**
 * `auth.webhooks.recipients`: which partners get a webhook for this event. Record events go to
 * every partner with an active consent of that member covering the event's scope; the
 * `user.consent.revoked` and `webhook.test` events go only to the partner named by `client_id`.
 * Suspended partners and partners without a webhook URL get nothing.
 */
export interface WebhookRecipientsRequest {
  readonly user_id: string;
  readonly event_type: EventType;
  readonly client_id?: string;
}

export interface WebhookRecipient {
  readonly client_id: string;
  readonly webhook_url: string;
  /** The partner's valid signing secrets, opened (current, then next while rotating). */
  readonly secrets: string[];
}

export interface WebhookRecipientsResponse {
  readonly recipients: WebhookRecipient[];
}

const NAME = 'auth.webhooks.recipients';

export const AUTH_WEBHOOK_RECIPIENTS: RpcContract<WebhookRecipientsRequest, WebhookRecipientsResponse> = {
  pattern: NAME,
  queue: RPC_QUEUES.authServer,
  parseRequest(input) {
    const r = readRecord(NAME, input);
    const user_id = readString(NAME, r, 'user_id', 200);
    const event_type = readOneOf(NAME, r, 'event_type', EVENT_TYPES);
    const client_id = readOptionalString(NAME, r, 'client_id', 200);
    return client_id === undefined ? { user_id, event_type } : { user_id, event_type, client_id };
  },
  parseResponse(input) {
    const r = readRecord(NAME, input);
    const list = r.recipients;
    if (!Array.isArray(list)) throw new ContractViolation(NAME, '`recipients` must be an array');
    return {
      recipients: list.map((item) => {
        const e = readRecord(NAME, item);
        return {
          client_id: readString(NAME, e, 'client_id'),
          webhook_url: readString(NAME, e, 'webhook_url'),
          secrets: readStringArray(NAME, e, 'secrets'),
        };
      }),
    };
  },
};

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

function readQuestion(contract: string, input: unknown): WebhookRecipientsRequest {
  const r = readRecord(contract, input);
  const user_id = readString(contract, r, 'user_id', 200);
  const event_type = readOneOf(contract, r, 'event_type', EVENT_TYPES);
  const client_id = readOptionalString(contract, r, 'client_id', 200);
  return client_id === undefined ? { user_id, event_type } : { user_id, event_type, client_id };
}

function readRecipient(contract: string, input: unknown): WebhookRecipient {
  const e = readRecord(contract, input);
  return {
    client_id: readString(contract, e, 'client_id'),
    webhook_url: readString(contract, e, 'webhook_url'),
    secrets: readStringArray(contract, e, 'secrets'),
  };
}

export const AUTH_WEBHOOK_RECIPIENTS: RpcContract<WebhookRecipientsRequest, WebhookRecipientsResponse> = {
  pattern: NAME,
  queue: RPC_QUEUES.authServer,
  parseRequest(input) {
    return readQuestion(NAME, input);
  },
  parseResponse(input) {
    const r = readRecord(NAME, input);
    const list = r.recipients;
    if (!Array.isArray(list)) throw new ContractViolation(NAME, '`recipients` must be an array');
    return { recipients: list.map((item) => readRecipient(NAME, item)) };
  },
};

/**
 * `auth.webhooks.recipients.batch`: the same question for many events at once, answered in one
 * message and one statement. The dispatcher asks it for the events it fans out together, so
 * auth-server's work and the RPC's messages are shared by a batch instead of paid per event.
 * Each partner appears once in `partners` (its secrets travel once per answer); `answers[i]` names
 * the recipients of `questions[i]` by client_id.
 */
export interface WebhookRecipientsBatchRequest {
  readonly questions: readonly WebhookRecipientsRequest[];
}

export interface WebhookRecipientsBatchResponse {
  readonly partners: WebhookRecipient[];
  readonly answers: { readonly client_ids: string[] }[];
}

/** Questions per batch: one array parameter per column, a message of a few hundred KiB at most. */
export const WEBHOOK_RECIPIENTS_MAX_QUESTIONS = 500;

const BATCH_NAME = 'auth.webhooks.recipients.batch';

export const AUTH_WEBHOOK_RECIPIENTS_BATCH: RpcContract<
  WebhookRecipientsBatchRequest,
  WebhookRecipientsBatchResponse
> = {
  pattern: BATCH_NAME,
  queue: RPC_QUEUES.authServer,
  parseRequest(input) {
    const list = readRecord(BATCH_NAME, input).questions;
    if (!Array.isArray(list) || list.length === 0 || list.length > WEBHOOK_RECIPIENTS_MAX_QUESTIONS) {
      throw new ContractViolation(
        BATCH_NAME,
        `\`questions\` must be an array of 1 to ${WEBHOOK_RECIPIENTS_MAX_QUESTIONS} questions`,
      );
    }
    return { questions: list.map((q) => readQuestion(BATCH_NAME, q)) };
  },
  parseResponse(input) {
    const r = readRecord(BATCH_NAME, input);
    if (!Array.isArray(r.partners) || !Array.isArray(r.answers)) {
      throw new ContractViolation(BATCH_NAME, '`partners` and `answers` must be arrays');
    }
    const partners = r.partners.map((p) => readRecipient(BATCH_NAME, p));
    const known = new Set(partners.map((p) => p.client_id));
    const answers = r.answers.map((a) => {
      const client_ids = readStringArray(BATCH_NAME, readRecord(BATCH_NAME, a), 'client_ids');
      const stranger = client_ids.find((id) => !known.has(id));
      if (stranger !== undefined) {
        throw new ContractViolation(BATCH_NAME, `an answer names ${stranger}, which is not in \`partners\``);
      }
      return { client_ids };
    });
    return { partners, answers };
  },
};

/** The recipients of each question, in the order asked, from a batch answer. */
export function recipientsOfBatch(
  questions: readonly WebhookRecipientsRequest[],
  response: WebhookRecipientsBatchResponse,
): WebhookRecipient[][] {
  if (response.answers.length !== questions.length) {
    throw new ContractViolation(
      BATCH_NAME,
      `${response.answers.length} answers to ${questions.length} questions`,
    );
  }
  const byId = new Map(response.partners.map((p) => [p.client_id, p]));
  return response.answers.map((a) => a.client_ids.map((id) => byId.get(id) as WebhookRecipient));
}

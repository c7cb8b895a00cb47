import { EVENT_TYPES } from '../../messaging';
import {
  fieldsContract,
  listOf,
  oneOf,
  optional,
  optionalText,
  readFields,
  readRecord,
  readString,
  readStringArray,
  text,
  type Read,
} from '../../validate';
import { ContractViolation, RPC_QUEUES, type RpcContract } from '../rpc';
import { API_LIMITS } from '../../limits';

/**
 * `auth.webhooks.recipients`: which partners get a webhook for this event. Record events go to
 * every partner with an active consent of that member covering the event's scope; the
 * `user.consent.revoked` and `webhook.test` events go only to the partner named by `client_id`.
 * Suspended partners and partners without a webhook URL get nothing.
 */
const QUESTION = {
  user_id: text(API_LIMITS.idMaxLength),
  event_type: oneOf(EVENT_TYPES),
  client_id: optionalText(API_LIMITS.idMaxLength),
};
export type WebhookRecipientsRequest = Read<typeof QUESTION>;

const RECIPIENT = {
  client_id: readString,
  webhook_url: readString,
  /** The partner's valid signing secrets, opened (current, then next while rotating). */
  secrets: readStringArray,
  /**
   * Its Ed25519 signing keys in use (oldest first), each `private_key` the base64 of its PKCS #8
   * DER, opened; absent or empty: it has none, and deliveries carry HMAC signatures only.
   */
  signing_keys: optional(listOf({ id: readString, private_key: readString })),
};
export type WebhookRecipient = Read<typeof RECIPIENT>;

export interface WebhookRecipientsResponse {
  readonly recipients: WebhookRecipient[];
}

/**
 * `auth.webhooks.target`: where the partner named by `client_id` receives the member's
 * `webhook.test` event (crew-api's `GET /v1/webhooks/test`), or null when it receives none
 * (no URL, suspended, no valid secret). The URL only: signing secrets go to the dispatcher alone.
 */
const TARGET_REQUEST = { user_id: text(API_LIMITS.idMaxLength), client_id: text(API_LIMITS.idMaxLength) };
export type WebhookTargetRequest = Read<typeof TARGET_REQUEST>;

export interface WebhookTargetResponse {
  readonly webhook_url: string | null;
}

export const AUTH_WEBHOOK_TARGET = fieldsContract(
  RPC_QUEUES.authServer,
  'auth.webhooks.target',
  ['crew-api'],
  TARGET_REQUEST,
  (contract, input): WebhookTargetResponse => {
    const r = readRecord(contract, input);
    if (r.webhook_url === null) return { webhook_url: null };
    return { webhook_url: readString(contract, r, 'webhook_url') };
  },
);

/**
 * `auth.webhooks.recipients.batch`: who receives each of many events, answered in one message and
 * one statement, with every recipient's opened signing secrets. Answered to the webhook
 * dispatcher alone (`callers`, checked on the request's broker-checked `user_id`): no other app
 * holds a signing secret. The dispatcher asks it for the events it fans out together, so
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
  callers: ['webhook-dispatcher'],
  parseRequest(input) {
    const list = readRecord(BATCH_NAME, input).questions;
    if (!Array.isArray(list) || list.length === 0 || list.length > WEBHOOK_RECIPIENTS_MAX_QUESTIONS) {
      throw new ContractViolation(
        BATCH_NAME,
        `\`questions\` must be an array of 1 to ${WEBHOOK_RECIPIENTS_MAX_QUESTIONS} questions`,
      );
    }
    return { questions: list.map((q) => readFields(BATCH_NAME, q, QUESTION)) };
  },
  parseResponse(input) {
    const r = readRecord(BATCH_NAME, input);
    if (!Array.isArray(r.partners) || !Array.isArray(r.answers)) {
      throw new ContractViolation(BATCH_NAME, '`partners` and `answers` must be arrays');
    }
    const partners = r.partners.map((p) => readFields(BATCH_NAME, p, RECIPIENT));
    const known = new Set(partners.map((p) => p.client_id));
    const answers = r.answers.map((a) => {
      const { client_ids } = readFields(BATCH_NAME, a, { client_ids: readStringArray });
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

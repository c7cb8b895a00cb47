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
import { ContractViolation } from '../rpc';
import { API_LIMITS } from '../../limits';

/**
 * `auth.webhooks.recipients`: record events go to partners whose consent covers the scope;
 * `user.consent.revoked` and `webhook.test` to `client_id` alone; never a suspended or URL-less one.
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

/** `auth.webhooks.target`: the partner's webhook URL for `webhook.test`, or null; never its secrets. */
const TARGET_REQUEST = { user_id: text(API_LIMITS.idMaxLength), client_id: text(API_LIMITS.idMaxLength) };
export type WebhookTargetRequest = Read<typeof TARGET_REQUEST>;

export interface WebhookTargetResponse {
  readonly webhook_url: string | null;
}

export const AUTH_WEBHOOK_TARGET = fieldsContract(
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
 * `auth.webhooks.recipients.batch`: the recipients of many events in one message, with their opened
 * signing secrets, so the dispatcher alone may ask. Each partner once in `partners`; `answers[i]`
 * names the recipients of `questions[i]`.
 */

export interface WebhookRecipientsBatchResponse {
  readonly partners: WebhookRecipient[];
  readonly answers: { readonly client_ids: string[] }[];
}

/** Questions per batch: one array parameter per column, a message of a few hundred KiB at most. */
export const WEBHOOK_RECIPIENTS_MAX_QUESTIONS = 500;

const BATCH_NAME = 'auth.webhooks.recipients.batch';

const BATCH_REQUEST = { questions: listOf(QUESTION, WEBHOOK_RECIPIENTS_MAX_QUESTIONS, 1) };
export type WebhookRecipientsBatchRequest = Read<typeof BATCH_REQUEST>;

export const AUTH_WEBHOOK_RECIPIENTS_BATCH = fieldsContract(
  BATCH_NAME,
  ['webhook-dispatcher'],
  BATCH_REQUEST,
  (_contract, input): WebhookRecipientsBatchResponse => {
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
);

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

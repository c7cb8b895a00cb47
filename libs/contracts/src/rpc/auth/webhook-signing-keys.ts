import { API_LIMITS } from '../../limits';
import type { WebhookSigningKeysResponse } from '../../responses';
import { fieldsContract, optional, readBoolean, readRecord, text } from '../../validate';
import { readObject } from '../portal-answer';
import { ContractViolation } from '../rpc';

/**
 * `auth.webhooks.signing-keys`: the partner's Ed25519 webhook signing keys, public halves only,
 * for `GET /v1/partners/webhooks/signing-keys` and the portal; with `rotate`, a new key first
 * (the partners CLI's `rotate-signing-key` from the portal). The keys live with the webhook
 * secrets in auth-server; only the dispatcher asks, and it names the partner it authenticated.
 */
export const AUTH_WEBHOOK_SIGNING_KEYS = fieldsContract(
  'auth.webhooks.signing-keys',
  ['webhook-dispatcher'],
  { client_id: text(API_LIMITS.idMaxLength), rotate: optional(readBoolean) },
  (contract, input): WebhookSigningKeysResponse => {
    const { data } = readRecord(contract, input);
    if (!Array.isArray(data)) throw new ContractViolation(contract, '`data` must be an array');
    return { data: data.map((k) => readObject(contract, k)) };
  },
);

import { createHmac, createPrivateKey, sign, type KeyObject } from 'node:crypto';
import type { ServiceEvent, WebhookRecipient } from '@svc/contracts';
import type { DeliveryRow } from './delivery.entity';

/**
 * The webhook body of docs/rules.md (Webhooks): `created_at`, `id`, `type`, `user_id`, keys sorted,
 * no whitespace, UTF-8. Built once per delivery and stored, so every attempt sends the same bytes.
 */
export function canonicalBody(event: ServiceEvent): string {
  const body = { created_at: event.created_at, id: event.id, type: event.type, user_id: event.user_id };
  return JSON.stringify(
    Object.fromEntries(Object.entries(body).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
  );
}

/**
 * `X-SVC-Signature: t=<ts>,v1=<hex>[,v1=<hex>…]`: HMAC-SHA256 of `<ts>.<raw body>` with every valid
 * secret (current and next while rotating) — Stripe's layout, so partners can verify with its tools.
 */
export function signatureHeader(secrets: readonly string[], timestamp: number, body: string): string {
  const signed = `${timestamp}.${body}`;
  const v1 = secrets.map((s) => `v1=${createHmac('sha256', s).update(signed, 'utf8').digest('hex')}`);
  return [`t=${timestamp}`, ...v1].join(',');
}

/**
 * Standard Webhooks' `webhook-signature`: `v1,<base64 HMAC-SHA256 of "<id>.<ts>.<raw body>">`, one
 * per valid secret, space-separated (standardwebhooks.com). The key is the secret's UTF-8 bytes as
 * issued, which the reference libraries take with `{ format: 'raw' }`, so no second secret exists.
 */
export function standardSignatureHeader(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string,
): string {
  const signed = `${id}.${timestamp}.${body}`;
  return secrets
    .map((s) => `v1,${createHmac('sha256', s).update(signed, 'utf8').digest('base64')}`)
    .join(' ');
}

/**
 * Parsed private keys by key id: parsing PKCS #8 costs about half a signature on Node 24 (ten on
 * Node 20's OpenSSL), and a key id never names another key. Cleared past PARSED_KEYS_MAX.
 */
const parsedKeys = new Map<string, KeyObject>();
const PARSED_KEYS_MAX = 10_000;

function privateKeyOf(key: { readonly id: string; readonly private_key: string }): KeyObject {
  let parsed = parsedKeys.get(key.id);
  if (!parsed) {
    if (parsedKeys.size >= PARSED_KEYS_MAX) parsedKeys.clear();
    parsed = createPrivateKey({ key: Buffer.from(key.private_key, 'base64'), format: 'der', type: 'pkcs8' });
    parsedKeys.set(key.id, parsed);
  }
  return parsed;
}

/**
 * Standard Webhooks' asymmetric entries: `v1a,<base64 Ed25519 signature of "<id>.<ts>.<raw
 * body>">` (RFC 8032), one per signing key in use, verified with the public key of
 * `GET /v1/partners/webhooks/signing-keys`.
 */
export function ed25519Signatures(
  keys: NonNullable<WebhookRecipient['signing_keys']>,
  id: string,
  timestamp: number,
  body: string,
): string[] {
  const signed = Buffer.from(`${id}.${timestamp}.${body}`, 'utf8');
  return keys.map((k) => `v1a,${sign(null, signed, privateKeyOf(k)).toString('base64')}`);
}

/**
 * The headers of one attempt (docs/rules.md, Webhooks), signed now with every valid secret and
 * signing key: the delivery path and an endpoint's enable test send exactly the same shape.
 * `webhook-id` is the event id, as `X-SVC-Event-Id`: a receiver dedupes an event's redeliveries
 * on it either way.
 */
export function attemptHeaders(
  identity: Pick<DeliveryRow, 'deliveryId' | 'eventId' | 'eventType'> & { readonly attempt: number },
  recipient: Pick<WebhookRecipient, 'secrets' | 'signing_keys'>,
  body: string,
): Record<string, string> {
  const timestamp = Math.floor(Date.now() / 1000);
  const standard = [
    standardSignatureHeader(recipient.secrets, identity.eventId, timestamp, body),
    ...ed25519Signatures(recipient.signing_keys ?? [], identity.eventId, timestamp, body),
  ];
  return {
    'content-type': 'application/json',
    'x-svc-event-id': identity.eventId,
    'x-svc-event-type': identity.eventType,
    'x-svc-delivery-id': identity.deliveryId,
    'x-svc-delivery-attempt': String(identity.attempt),
    'x-svc-timestamp': String(timestamp),
    'x-svc-signature': signatureHeader(recipient.secrets, timestamp, body),
    // The same attempt in Standard Webhooks' names, for receivers that verify with its libraries.
    'webhook-id': identity.eventId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': standard.join(' '),
  };
}

import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { PartnersService } from '../../apps/auth-server/src/partners/partners.service';
import { basicAuthorization } from '../support/factories';
import { createPartner, grantConsent, createUser } from '../support/app-factories';
import { eventually } from '../support/services';
import { newEvent, useDeliveryStack } from '../support/starters/webhook-dispatcher';
import type { ReceivedWebhook } from '../support/webhook-receiver';

/**
 * Ed25519 webhook signatures (Standard Webhooks `v1a`) on real deliveries, verified the way a
 * partner does: Node's crypto.verify and the public keys of GET /v1/partners/webhooks/signing-keys
 * alone. A key rotation signs with both keys; the HMAC entries verify as before.
 */
jest.setTimeout(40_000);

const { auth, dispatcher, receiver } = useDeliveryStack();

interface SigningKey {
  id: string;
  algorithm: string;
  public_key: string;
  created_at: string;
  expires_at: string | null;
}

async function signingKeys(authorization: string, etag?: string) {
  const res = await dispatcher.app.inject({
    method: 'GET',
    url: '/v1/partners/webhooks/signing-keys',
    headers: { authorization, ...(etag ? { 'if-none-match': etag } : {}) },
  });
  return {
    status: res.statusCode,
    headers: res.headers,
    keys: res.body ? res.json<{ data: SigningKey[] }>().data : [],
  };
}

/** The public key as a partner builds it from `public_key`: `whpk_` + base64 of the raw 32 bytes. */
function publicKeyOf(key: SigningKey): KeyObject {
  const raw = Buffer.from(key.public_key.replace(/^whpk_/, ''), 'base64');
  return createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') },
    format: 'jwk',
  });
}

function ed25519Verifies(request: ReceivedWebhook, key: SigningKey): boolean {
  const h = request.headers;
  const signed = Buffer.concat([
    Buffer.from(`${String(h['webhook-id'])}.${String(h['webhook-timestamp'])}.`),
    request.rawBody,
  ]);
  return String(h['webhook-signature'])
    .split(' ')
    .filter((entry) => entry.startsWith('v1a,'))
    .some((entry) => verify(null, signed, publicKeyOf(key), Buffer.from(entry.slice(4), 'base64')));
}

async function deliveredTo(path: string, count: number): Promise<ReceivedWebhook> {
  const got = await eventually(async () => {
    const requests = receiver.requests(path);
    return requests.length >= count ? requests : undefined;
  });
  return got[count - 1];
}

describe('Ed25519 webhook signatures (v1a)', () => {
  it('a partner without keys gets HMAC entries only, and an empty key list', async () => {
    const path = '/no-keys';
    const p = await createPartner(auth, { webhookUrl: receiver.endpoint(path), scopes: ['profile:read'] });
    const userId = (await createUser(auth)).user_id;
    await grantConsent(auth, userId, p.client_id, ['profile:read']);
    await dispatcher.publish(newEvent('user.profile.updated', userId));
    const request = await deliveredTo(path, 1);
    expect(request.headers['webhook-signature']).toMatch(/^v1,\S{44}$/);
    const read = await signingKeys(basicAuthorization(p.client_id, p.client_secret));
    expect(read).toMatchObject({ status: 200, keys: [] });
    expect(read.headers['cache-control']).toBe('private, no-cache');
    expect((await signingKeys(basicAuthorization(p.client_id, 'wrong'))).status).toBe(401);
  });

  it('signs with the key read from the endpoint, then with both keys while it is replaced', async () => {
    const path = '/keys';
    const p = await createPartner(auth, { webhookUrl: receiver.endpoint(path), scopes: ['profile:read'] });
    const basic = basicAuthorization(p.client_id, p.client_secret);
    const partners = auth.app.get(PartnersService);
    const userId = (await createUser(auth)).user_id;
    await grantConsent(auth, userId, p.client_id, ['profile:read']);

    await partners.rotateSigningKey(p.client_id);
    const first = await signingKeys(basic);
    expect(first.keys).toEqual([
      {
        id: expect.stringMatching(/^whk_/),
        algorithm: 'Ed25519',
        public_key: expect.stringMatching(/^whpk_[A-Za-z0-9+/]{43}=$/),
        created_at: expect.any(String),
        expires_at: null,
      },
    ]);
    // Unchanged keys: 304 without a body, and still counted like any request.
    const again = await signingKeys(basic, String(first.headers.etag));
    expect(again.status).toBe(304);
    expect(again.headers['x-ratelimit-remaining']).toBeDefined();

    const event = newEvent('user.profile.updated', userId);
    await dispatcher.publish(event);
    const signedOnce = await deliveredTo(path, 1);
    expect(signedOnce.headers['webhook-signature']).toMatch(/^v1,\S{44} v1a,\S{88}$/);
    expect(ed25519Verifies(signedOnce, first.keys[0])).toBe(true);

    await partners.rotateSigningKey(p.client_id);
    const rotated = await signingKeys(basic, String(first.headers.etag));
    expect(rotated.status).toBe(200);
    expect(rotated.keys.map((k) => k.id)).toEqual([
      first.keys[0].id,
      expect.not.stringMatching(first.keys[0].id),
    ]);
    const [old, next] = rotated.keys;
    expect(Date.parse(String(old.expires_at)) - Date.now()).toBeGreaterThan(6.9 * 24 * 3600_000);
    expect(next.expires_at).toBeNull();

    // The recipient cache keeps what auth-server said for a few seconds: a fresh event signs anew.
    const second = newEvent('user.profile.updated', userId);
    await dispatcher.publish(second);
    const signedTwice = await eventually(async () => {
      const r = receiver.requests(path).find((x) => x.headers['webhook-id'] === second.id);
      return r && String(r.headers['webhook-signature']).split(' ').length === 3 ? r : undefined;
    });
    expect(signedTwice.headers['webhook-signature']).toMatch(/^v1,\S{44} v1a,\S{88} v1a,\S{88}$/);
    expect(ed25519Verifies(signedTwice, old)).toBe(true);
    expect(ed25519Verifies(signedTwice, next)).toBe(true);
    const headers = {
      'webhook-id': String(signedTwice.headers['webhook-id']),
      'webhook-timestamp': String(signedTwice.headers['webhook-timestamp']),
      'webhook-signature': String(signedTwice.headers['webhook-signature']),
    };
    expect(
      new Webhook(p.webhookSecrets[0], { format: 'raw' }).verify(
        signedTwice.rawBody.toString('utf8'),
        headers,
      ),
    ).toMatchObject({ id: second.id });
    // Another partner's keys verify nothing of this one's.
    const stranger = await createPartner(auth, { webhookUrl: receiver.endpoint('/stranger') });
    await partners.rotateSigningKey(stranger.client_id);
    const [theirs] = (await signingKeys(basicAuthorization(stranger.client_id, stranger.client_secret))).keys;
    expect(ed25519Verifies(signedTwice, theirs)).toBe(false);

    // A third key retires the oldest at once: two keys in use at most.
    await partners.rotateSigningKey(p.client_id);
    const third = await signingKeys(basic);
    expect(third.keys.map((k) => k.id)).toEqual([next.id, expect.any(String)]);
  });
});

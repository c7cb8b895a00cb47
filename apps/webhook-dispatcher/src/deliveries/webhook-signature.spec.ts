import { createHmac, generateKeyPairSync, verify, type KeyObject } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import {
  attemptHeaders,
  canonicalBody,
  ed25519Signatures,
  signatureHeader,
  standardSignatureHeader,
} from './webhook-signature';

describe('canonicalBody (docs/rules.md, Webhooks)', () => {
  it('sorts the keys, has no whitespace, and leaves client_id out', () => {
    expect(
      canonicalBody({
        user_id: 'usr_1',
        type: 'user.consent.revoked',
        id: 'evt_1',
        created_at: '2026-01-02T03:04:05.000Z',
        client_id: 'partner',
      }),
    ).toBe(
      '{"created_at":"2026-01-02T03:04:05.000Z","id":"evt_1","type":"user.consent.revoked","user_id":"usr_1"}',
    );
  });

  it('keeps non-ASCII characters as UTF-8, not escapes', () => {
    const body = canonicalBody({ id: 'evt_ø', type: 'webhook.test', user_id: 'usr_å', created_at: 'x' });
    expect(body).toContain('"usr_å"');
  });
});

describe('signatureHeader', () => {
  it('is t=<ts> and one v1 HMAC-SHA256 of "<ts>.<body>" per secret', () => {
    const v = (s: string) => createHmac('sha256', s).update('1700000000.{"a":1}').digest('hex');
    expect(signatureHeader(['one', 'two'], 1700000000, '{"a":1}')).toBe(
      `t=1700000000,v1=${v('one')},v1=${v('two')}`,
    );
  });
});

describe('Standard Webhooks headers', () => {
  const identity = { deliveryId: 'dlv_1', eventId: 'evt_1', eventType: 'webhook.test', attempt: 2 };

  it('signs "<webhook-id>.<webhook-timestamp>.<body>" once per secret, as v1,<base64>', () => {
    const signed = '1700000000.{"a":1}';
    const b64 = (s: string) => createHmac('sha256', s).update(`evt_1.${signed}`).digest('base64');
    expect(standardSignatureHeader(['one', 'two'], 'evt_1', 1700000000, '{"a":1}')).toBe(
      `v1,${b64('one')} v1,${b64('two')}`,
    );
  });

  it('verify with the standardwebhooks library and the secret as issued', () => {
    const body = '{"a":1}';
    const headers = attemptHeaders(identity, { secrets: ['whsec_old', 'whsec_sandbox_secret'] }, body);
    expect(headers['webhook-id']).toBe('evt_1');
    expect(headers['webhook-timestamp']).toBe(headers['x-svc-timestamp']);
    for (const secret of ['whsec_old', 'whsec_sandbox_secret']) {
      expect(new Webhook(secret, { format: 'raw' }).verify(body, headers)).toEqual({ a: 1 });
    }
    expect(() => new Webhook('whsec_other', { format: 'raw' }).verify(body, headers)).toThrow();
    expect(() => new Webhook('whsec_sandbox_secret', { format: 'raw' }).verify('{"a":2}', headers)).toThrow();
  });
});

describe('Ed25519 signatures (Standard Webhooks v1a)', () => {
  const identity = { deliveryId: 'dlv_1', eventId: 'evt_1', eventType: 'webhook.test', attempt: 1 };
  const newKey = (id: string) => {
    const pair = generateKeyPairSync('ed25519');
    const der = pair.privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64');
    return { key: { id, private_key: der }, publicKey: pair.publicKey };
  };
  const verifies = (headers: Record<string, string>, body: string, publicKey: KeyObject) => {
    const signed = Buffer.from(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`);
    return headers['webhook-signature']
      .split(' ')
      .filter((e) => e.startsWith('v1a,'))
      .some((e) => verify(null, signed, publicKey, Buffer.from(e.slice(4), 'base64')));
  };

  it('adds one v1a entry per key after the v1 entries, each verifying with its public key alone', () => {
    const [old, next] = [newKey('whk_old'), newKey('whk_next')];
    const body = '{"a":1}';
    const headers = attemptHeaders(
      identity,
      { secrets: ['whsec_s'], signing_keys: [old.key, next.key] },
      body,
    );
    expect(headers['webhook-signature']).toMatch(/^v1,\S{44} v1a,\S{88} v1a,\S{88}$/);
    expect(verifies(headers, body, old.publicKey)).toBe(true);
    expect(verifies(headers, body, next.publicKey)).toBe(true);
    expect(verifies(headers, '{"a":2}', next.publicKey)).toBe(false);
    expect(verifies(headers, body, newKey('whk_other').publicKey)).toBe(false);
    // The reference library checks its v1 entry and passes over the v1a ones.
    expect(new Webhook('whsec_s', { format: 'raw' }).verify(body, headers)).toEqual({ a: 1 });
  });

  it('changes nothing for a partner without keys', () => {
    const headers = attemptHeaders(identity, { secrets: ['whsec_s'], signing_keys: [] }, '{}');
    expect(headers['webhook-signature']).toMatch(/^v1,\S{44}$/);
    expect(ed25519Signatures([], 'evt_1', 1, '{}')).toEqual([]);
  });

  it('signs "<id>.<ts>.<body>" deterministically (RFC 8032), the same with the key already parsed', () => {
    const { key, publicKey } = newKey('whk_same');
    const [first] = ed25519Signatures([key], 'evt_1', 1700000000, '{"a":1}');
    expect(ed25519Signatures([key], 'evt_1', 1700000000, '{"a":1}')).toEqual([first]);
    const signed = Buffer.from('evt_1.1700000000.{"a":1}');
    expect(verify(null, signed, publicKey, Buffer.from(first.slice(4), 'base64'))).toBe(true);
  });
});

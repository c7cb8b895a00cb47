import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { attemptHeaders, canonicalBody, signatureHeader, standardSignatureHeader } from './webhook-signature';

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
    const headers = attemptHeaders(identity, ['whsec_old', 'whsec_sandbox_secret'], body);
    expect(headers['webhook-id']).toBe('evt_1');
    expect(headers['webhook-timestamp']).toBe(headers['x-svc-timestamp']);
    for (const secret of ['whsec_old', 'whsec_sandbox_secret']) {
      expect(new Webhook(secret, { format: 'raw' }).verify(body, headers)).toEqual({ a: 1 });
    }
    expect(() => new Webhook('whsec_other', { format: 'raw' }).verify(body, headers)).toThrow();
    expect(() => new Webhook('whsec_sandbox_secret', { format: 'raw' }).verify('{"a":2}', headers)).toThrow();
  });
});

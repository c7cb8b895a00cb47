import { createHmac } from 'node:crypto';
import { canonicalBody, signatureHeader } from './webhook-signature';

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

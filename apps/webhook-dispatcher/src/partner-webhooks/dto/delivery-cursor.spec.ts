import { PartnerWebhooksException } from '../partner-webhooks.exception';
import { decodeDeliveryCursor, encodeDeliveryCursor } from './delivery-cursor';

describe('delivery cursor', () => {
  it('round-trips a keyset position to the microsecond', () => {
    const position = { createdAt: '2026-03-03T09:15:00.123456Z', deliveryId: 'dlv_Hq3vT8mW1xZ5nB7k' };
    expect(decodeDeliveryCursor(encodeDeliveryCursor(position))).toEqual(position);
  });

  it.each([
    ['not base64url', 'a+b/c'],
    ['not JSON', Buffer.from('nope').toString('base64url')],
    [
      'a millisecond time',
      Buffer.from(JSON.stringify({ t: '2026-03-03T09:15:00.123Z', id: 'dlv_a' })).toString('base64url'),
    ],
    [
      'not a delivery id',
      Buffer.from(JSON.stringify({ t: '2026-03-03T09:15:00.123456Z', id: 'x' })).toString('base64url'),
    ],
    ['too long', 'a'.repeat(401)],
  ])('refuses %s as invalid_cursor', (_what, text) => {
    expect(() => decodeDeliveryCursor(text)).toThrow(PartnerWebhooksException);
  });
});

import { SeatsException } from '../seats.exception';
import { decodeSeatCursor, encodeSeatCursor } from './seat-cursor';

describe('seat list cursors', () => {
  const cursor = {
    invitedAt: '2026-11-21T10:00:00.123456Z',
    sponsorshipId: 'sps_abc',
    status: 'invited' as const,
  };

  it('round-trips', () => {
    expect(decodeSeatCursor(encodeSeatCursor(cursor))).toEqual(cursor);
    expect(decodeSeatCursor(encodeSeatCursor({ ...cursor, status: null }))).toEqual({
      ...cursor,
      status: null,
    });
  });

  it.each([
    ['not base64url', 'a.b'],
    ['not JSON', Buffer.from('{').toString('base64url')],
    [
      'a bad time',
      Buffer.from(JSON.stringify({ t: '2026-11-21', id: 'sps_a', s: null })).toString('base64url'),
    ],
    [
      'a bad id',
      Buffer.from(JSON.stringify({ t: cursor.invitedAt, id: 'x y', s: null })).toString('base64url'),
    ],
    [
      'a bad status',
      Buffer.from(JSON.stringify({ t: cursor.invitedAt, id: 'sps_a', s: 'gone' })).toString('base64url'),
    ],
    ['too long', 'a'.repeat(401)],
  ])('refuses %s', (_what, text) => {
    expect(() => decodeSeatCursor(text)).toThrow(SeatsException);
  });
});

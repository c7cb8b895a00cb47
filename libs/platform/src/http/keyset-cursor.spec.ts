import { decodeCursorFields, encodeCursorFields, isExactInstant } from './keyset-cursor';

describe('keyset cursors', () => {
  it('reads back the fields it wrote, as opaque base64url', () => {
    const text = encodeCursorFields({ t: '2026-01-31T12:00:00.123456Z', id: 'sp_1', s: null });
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursorFields(text, 1024)).toEqual({ t: '2026-01-31T12:00:00.123456Z', id: 'sp_1', s: null });
  });

  it.each([
    ['too long', encodeCursorFields({ id: 'x'.repeat(100) }), 50],
    ['not base64url', 'abc+/=', 1024],
    ['not JSON', Buffer.from('{no').toString('base64url'), 1024],
    ['JSON but no object', Buffer.from('"text"').toString('base64url'), 1024],
    ['null', Buffer.from('null').toString('base64url'), 1024],
  ])('refuses a text that is %s', (_case, text, maxLength) => {
    expect(decodeCursorFields(text, maxLength)).toBeUndefined();
  });

  it('takes only real instants kept to the microsecond', () => {
    expect(isExactInstant('2026-01-31T12:00:00.123456Z')).toBe(true);
    expect(isExactInstant('2026-01-31T12:00:00.123Z')).toBe(false);
    expect(isExactInstant('2026-13-31T12:00:00.123456Z')).toBe(false);
    expect(isExactInstant(20260131)).toBe(false);
  });
});

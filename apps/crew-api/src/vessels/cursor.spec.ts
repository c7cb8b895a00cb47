import { createHmac } from 'node:crypto';
import { RecordsException } from '../records/records.exception';
import { CursorCodec, type VesselCursor } from './cursor';

const codec = new CursorCodec('k'.repeat(32));
const cursor: VesselCursor = {
  asOf: '2026-01-31T12:00:00.123456Z',
  start: '2025-12-01T00:00:00.000000Z',
  id: 'vp_abc',
  limit: 7,
};

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof RecordsException ? err.code : 'other';
  }
  return undefined;
}

describe('CursorCodec', () => {
  it('round-trips a cursor', () => {
    expect(codec.decode('usr_1', codec.encode('usr_1', cursor))).toEqual(cursor);
  });

  it('is opaque base64url with a signature', () => {
    expect(codec.encode('usr_1', cursor)).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
  });

  it('refuses a cursor of another member', () => {
    expect(codeOf(() => codec.decode('usr_2', codec.encode('usr_1', cursor)))).toBe('invalid_cursor');
  });

  it('refuses a cursor signed with another key', () => {
    const other = new CursorCodec('o'.repeat(32)).encode('usr_1', cursor);
    expect(codeOf(() => codec.decode('usr_1', other))).toBe('invalid_cursor');
  });

  it('refuses a payload changed after signing', () => {
    const [, signature] = codec.encode('usr_1', cursor).split('.');
    const forged = Buffer.from(
      JSON.stringify({ as_of: cursor.asOf, start: cursor.start, id: 'vp_zzz', limit: 7 }),
    ).toString('base64url');
    expect(codeOf(() => codec.decode('usr_1', `${forged}.${signature}`))).toBe('invalid_cursor');
  });

  it('refuses the other spellings of a signature that decode to the same bytes', () => {
    const issued = codec.encode('usr_1', cursor);
    const [payload, signature] = issued.split('.');
    // The 43rd base64url character carries 4 bits of the digest and 2 unused bits.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(signature.slice(-1));
    const spellings = [0, 1, 2, 3]
      .map((low) => signature.slice(0, -1) + alphabet[(last & ~3) | low])
      .filter((s) => s !== signature);
    expect(spellings).toHaveLength(3);
    for (const spelling of spellings) {
      expect(Buffer.from(spelling, 'base64url')).toEqual(Buffer.from(signature, 'base64url'));
      expect(codeOf(() => codec.decode('usr_1', `${payload}.${spelling}`))).toBe('invalid_cursor');
    }
    expect(codec.decode('usr_1', issued)).toEqual(cursor);
  });

  it.each(['', 'abc', 'a.b', `${'a'.repeat(2000)}.x`, 'eyJ9.' + 'A'.repeat(43), '!!!.' + 'A'.repeat(43)])(
    'refuses %p',
    (text) => {
      expect(codeOf(() => codec.decode('usr_1', text))).toBe('invalid_cursor');
    },
  );

  it('refuses a validly signed payload of the wrong shape', () => {
    const payload = Buffer.from(JSON.stringify({ as_of: 'yesterday', limit: 7 })).toString('base64url');
    // Signed by hand as the codec signs, so only the shape check can refuse it.
    const signature = createHmac('sha256', 'k'.repeat(32)).update(`usr_1\n${payload}`).digest('base64url');
    const text = `${payload}.${signature}`;
    expect(codeOf(() => codec.decode('usr_1', text))).toBe('invalid_cursor');
  });
});

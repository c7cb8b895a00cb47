import { decodeCursorFields, encodeCursorFields, isExactInstant } from '@svc/platform';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { RecordsException } from '../records/records.exception';

/** A scan's snapshot (`as_of`), its keyset position (`period_start`, `id`; µs) and page size. */
export interface VesselCursor {
  readonly asOf: string;
  readonly start: string;
  readonly id: string;
  readonly limit: number;
}

const MAX_CURSOR_LENGTH = 1024;
const ID = /^[A-Za-z0-9_-]{1,100}$/;

function invalid(reason: string): RecordsException {
  return new RecordsException(
    'invalid_cursor',
    `The cursor is not one this API issued (${reason}); start again from the first page.`,
  );
}

/** Tamper-evident cursors: `base64url(JSON) "." HMAC(key, user_id "\n" base64url(JSON))`, bound to the member. */
export class CursorCodec {
  constructor(private readonly key: string) {}

  encode(userId: string, cursor: VesselCursor): string {
    const payload = encodeCursorFields({
      as_of: cursor.asOf,
      start: cursor.start,
      id: cursor.id,
      limit: cursor.limit,
    });
    return `${payload}.${this.sign(userId, payload).toString('base64url')}`;
  }

  /** The cursor, or RecordsException `invalid_cursor` for anything malformed or tampered with. */
  decode(userId: string, text: string): VesselCursor {
    if (text.length > MAX_CURSOR_LENGTH) throw invalid('too long');
    const m = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/.exec(text);
    if (!m) throw invalid('malformed');
    // Compared as text, not as decoded bytes: the 43rd character carries two unused bits, and
    // decoding would let four spellings of one signature through.
    const given = Buffer.from(m[2], 'latin1');
    const expected = Buffer.from(this.sign(userId, m[1]).toString('base64url'), 'latin1');
    if (!timingSafeEqual(given, expected)) throw invalid('bad signature');
    const c = decodeCursorFields(m[1], MAX_CURSOR_LENGTH);
    if (
      !c ||
      !isExactInstant(c.as_of) ||
      !isExactInstant(c.start) ||
      typeof c.id !== 'string' ||
      !ID.test(c.id) ||
      typeof c.limit !== 'number' ||
      !Number.isInteger(c.limit) ||
      c.limit < 1 ||
      c.limit > 200
    ) {
      throw invalid('unreadable');
    }
    return { asOf: c.as_of, start: c.start, id: c.id, limit: c.limit };
  }

  private sign(userId: string, payload: string): Buffer {
    return createHmac('sha256', this.key).update(`${userId}\n${payload}`).digest();
  }
}

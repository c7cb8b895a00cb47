import { API_LIMITS, normaliseEmail, PROVISION_SEAT_BODY, SEAT_LIST_QUERY } from '@svc/contracts';
import { FieldReader, parseTimestamp } from '@svc/platform';
import type { SeatStatus } from '../seat.entity';

const SEAT_ID = /^sps_[A-Za-z0-9_-]{1,96}$/;

export interface SeatListQuery {
  readonly status?: SeatStatus;
  readonly limit: number;
  readonly cursor?: string;
}

/** `GET /v1/partners/sponsorships?status=&limit=&cursor=` */
export function parseSeatListQuery(query: unknown): SeatListQuery {
  const reader = FieldReader.query(query);
  // The description allows any list cursor; this list never issues one longer than its own limit.
  const { status, limit, cursor } = reader.fields({
    ...SEAT_LIST_QUERY,
    cursor: { ...SEAT_LIST_QUERY.cursor, maxLength: API_LIMITS.seatCursorMaxLength },
  });
  reader.done();
  return { status, limit: limit ?? API_LIMITS.pageLimitDefault, cursor };
}

/** A `{sponsorship_id}` path parameter: anything else cannot be a seat, so it is simply not found. */
export function isSeatId(text: string): boolean {
  return SEAT_ID.test(text);
}

export interface Provision {
  readonly email: string;
  readonly externalRef: string | null;
  readonly expiresAt: Date | null;
}

/** `POST /v1/partners/sponsorships`, then the term's range: ahead of `now`, within the longest term. */
export function parseProvision(body: unknown, now: Date): Provision {
  const reader = FieldReader.body(body);
  const { email, external_ref, expires_at } = reader.fields(PROVISION_SEAT_BODY);
  const latest = new Date(now);
  latest.setUTCFullYear(latest.getUTCFullYear() + API_LIMITS.sponsorshipMaxTermYears);
  // Only a timestamp that parsed gets the range check (an unparsable one has its error already);
  // the epoch is a real, past instant, not a marker of "unparsable".
  const raw = (body as Record<string, unknown>).expires_at;
  const parsed = typeof raw === 'string' && parseTimestamp(raw) !== undefined;
  if (parsed && expires_at && (expires_at <= now || expires_at > latest)) {
    reader.fail(
      'expires_at',
      `must be in the future and at most ${API_LIMITS.sponsorshipMaxTermYears} years ahead`,
    );
  }
  reader.done();
  return { email: normaliseEmail(email), externalRef: external_ref, expiresAt: expires_at };
}

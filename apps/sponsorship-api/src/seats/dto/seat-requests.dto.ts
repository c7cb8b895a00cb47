import { API_LIMITS, normaliseEmail } from '@svc/contracts';
import { FieldReader, parseTimestamp } from '@svc/platform';
import { SEAT_STATUSES, type SeatStatus } from '../seat.entity';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const SEAT_ID = /^sps_[A-Za-z0-9_-]{1,96}$/;
const MAX_TERM_YEARS = API_LIMITS.sponsorshipMaxTermYears;

export interface SeatListQuery {
  readonly status?: SeatStatus;
  readonly limit: number;
  readonly cursor?: string;
}

/** `GET /v1/partners/sponsorships?status=&limit=&cursor=` */
export function parseSeatListQuery(query: unknown): SeatListQuery {
  const reader = FieldReader.query(query);
  const status = reader.queryString('status', 20);
  if (status !== undefined && !(SEAT_STATUSES as readonly string[]).includes(status)) {
    reader.fail('status', `must be one of ${SEAT_STATUSES.join(', ')}`);
  }
  const limit = reader.queryInteger('limit', 1, API_LIMITS.pageLimitMax);
  const cursor = reader.queryString('cursor', API_LIMITS.seatCursorMaxLength);
  reader.done();
  return { status: status as SeatStatus | undefined, limit: limit ?? API_LIMITS.pageLimitDefault, cursor };
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

/** `POST /v1/partners/sponsorships` `{email, external_ref?, expires_at?}` (decisions.md, Sponsorship). */
export function parseProvision(body: unknown, now: Date): Provision {
  const reader = FieldReader.body(body).onlyFields(['email', 'external_ref', 'expires_at']);
  const email = reader.string('email', {
    max: API_LIMITS.emailMaxLength,
    pattern: EMAIL,
    patternMessage: 'must be an e-mail address',
  });
  const externalRef =
    reader.has('external_ref') && (body as Record<string, unknown>).external_ref !== null
      ? reader.string('external_ref', { max: API_LIMITS.refMaxLength })
      : null;
  let expiresAt: Date | null = null;
  const rawExpiry = (body as Record<string, unknown>).expires_at;
  if (rawExpiry !== undefined && rawExpiry !== null) {
    expiresAt = reader.timestamp('expires_at');
    const latest = new Date(now);
    latest.setUTCFullYear(latest.getUTCFullYear() + MAX_TERM_YEARS);
    // Only a timestamp that parsed gets the range check (an unparsable one has its error already);
    // the epoch is a real, past instant, not a marker of "unparsable".
    const parsed = typeof rawExpiry === 'string' && parseTimestamp(rawExpiry) !== undefined;
    if (parsed && (expiresAt <= now || expiresAt > latest)) {
      reader.fail('expires_at', `must be in the future and at most ${MAX_TERM_YEARS} years ahead`);
    }
  }
  reader.done();
  return { email: normaliseEmail(email), externalRef, expiresAt };
}

import { ContractViolation } from '../rpc';
import { API_LIMITS, DAY_MS } from '../../limits';
import { SCOPES } from '../../scopes';
import {
  fieldsContract,
  listOf,
  oneOf,
  optional,
  readStringArray,
  text,
  timestampText,
  wholeNumber,
  type FieldRead,
  type Read,
} from '../../validate';

/** How often each partner read a member's record, per scope and UTC day; owned by auth-server. */

/** ACCESS_READS_FLUSH_MS's largest value: every replica sends its counts at least once a minute. */
export const ACCESS_READS_FLUSH_MAX_MS = 60_000;

/**
 * The most reads one count may hold: the largest day budget a deployment may configure, which no
 * count (per member, partner, scope and day, kept over failed flushes) can outgrow.
 */
export const ACCESS_READS_MAX_COUNT = API_LIMITS.ratePerMinuteMax * (ACCESS_READS_FLUSH_MAX_MS / 60_000);

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** A count is of today's or yesterday's reads (UTC): just after midnight, yesterday's last may still arrive. */
export function isRecentReadDay(day: string, now = Date.now()): boolean {
  return day === dayOf(now) || day === dayOf(now - DAY_MS);
}

/** A UTC calendar day, `YYYY-MM-DD`. */
const utcDay: FieldRead<string> = (contract, record, field) => {
  const value = text(10)(contract, record, field);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`))) {
    throw new ContractViolation(contract, `\`${field}\` must be a day (YYYY-MM-DD)`);
  }
  return value;
};

/** Today or yesterday (UTC), see `isRecentReadDay`. */
const recentDay: FieldRead<string> = (contract, record, field) => {
  const value = utcDay(contract, record, field);
  if (!isRecentReadDay(value))
    throw new ContractViolation(contract, `\`${field}\` must be today or yesterday (UTC)`);
  return value;
};

/** At least one read, at most ACCESS_READS_MAX_COUNT. */
const recentCount: FieldRead<number> = (contract, record, field) => {
  const value = wholeNumber(contract, record, field);
  if (value > ACCESS_READS_MAX_COUNT) {
    throw new ContractViolation(contract, `\`${field}\` must be at most ${ACCESS_READS_MAX_COUNT}`);
  }
  return value;
};

/** One member's reads by one partner under one scope on one UTC day, and the time of the last. */
const READ_COUNT = {
  user_id: text(API_LIMITS.idMaxLength),
  client_id: text(API_LIMITS.idMaxLength),
  scope: oneOf(SCOPES),
  day: recentDay,
  count: recentCount,
  /** ISO 8601 UTC: the latest read counted here. */
  last_at: timestampText,
};
export type AccessReadCount = Read<typeof READ_COUNT>;

/** At most this many counts travel in one message; a replica with more sends several. */
export const ACCESS_READS_PER_MESSAGE = 1000;

/** `auth.access-reads.record`: crew-api's counts since its last flush, added to the stored ones; `recorded`: rows written. */
export const AUTH_ACCESS_READS_RECORD = fieldsContract(
  'auth.access-reads.record',
  ['crew-api'],
  { counts: listOf(READ_COUNT, ACCESS_READS_PER_MESSAGE) },
  { recorded: wholeNumber },
);

/** Each consent the member gave, ended ones too (a new consent after a disconnect is a new row). */
const CONSENT = {
  client_id: text(API_LIMITS.idMaxLength),
  client_name: text(500),
  scopes: readStringArray,
  granted_at: timestampText,
  /** Absent while the consent stands. */
  revoked_at: optional(timestampText),
};

/** A partner's reads of the member's record under one scope on one UTC day. */
const DAILY_READS = {
  client_id: text(API_LIMITS.idMaxLength),
  scope: oneOf(SCOPES),
  day: utcDay,
  count: wholeNumber,
  last_at: timestampText,
};

const MEMBER_ACCESS = {
  consents: listOf(CONSENT),
  /** Every retained day (13 months), oldest first; partners' names are those of `partners`. */
  reads: listOf(DAILY_READS),
  /** Every partner named in `consents` or `reads`, with its display name. */
  partners: listOf({ client_id: text(API_LIMITS.idMaxLength), client_name: text(500) }),
};
export type MemberAccessResponse = Read<typeof MEMBER_ACCESS>;

/** `auth.member.access`: a signed-in member's own consents and access history, for consent-ui. */
export const AUTH_MEMBER_ACCESS = fieldsContract(
  'auth.member.access',
  ['consent-ui'],
  { user_id: text(API_LIMITS.idMaxLength) },
  MEMBER_ACCESS,
);

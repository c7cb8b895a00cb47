import {
  fieldsContract,
  listOf,
  readBoolean,
  optionalText,
  readString,
  readStringArray,
  text,
  textList,
  timestampText,
  type FieldRead,
  type Read,
} from '../../validate';
import { ContractViolation } from '../rpc';
import { API_LIMITS } from '../../limits';

/** Entitlements: sponsorship-api grants and drops premium on crew-api, idempotent per `sponsorship_id`. */

/** A crew member found by e-mail (normalised: trimmed, lower-case). */
const MEMBER = {
  user_id: text(API_LIMITS.idMaxLength),
  email: text(API_LIMITS.emailMaxLength),
  name: readString,
};
export type CrewMemberSummary = Read<typeof MEMBER>;

const BY_EMAIL_RESPONSE = { members: listOf(MEMBER) };
export type MembersByEmailResponse = Read<typeof BY_EMAIL_RESPONSE>;

/** A term ends within `sponsorshipMaxTermYears` from now, plus a day for two apps' clocks. */
const termEnd: FieldRead<string> = (contract, record, field) => {
  const value = timestampText(contract, record, field);
  const latest = new Date();
  latest.setUTCFullYear(latest.getUTCFullYear() + API_LIMITS.sponsorshipMaxTermYears);
  if (Date.parse(value) > latest.getTime() + 86_400_000) {
    throw new ContractViolation(
      contract,
      `\`${field}\` must be within ${API_LIMITS.sponsorshipMaxTermYears} years from now`,
    );
  }
  return value;
};

const GRANT_REQUEST = {
  /** ISO 8601 UTC: the end of the sponsored term. */
  expires_at: termEnd,
  user_id: text(API_LIMITS.idMaxLength),
  sponsor_client_id: text(API_LIMITS.idMaxLength),
  sponsorship_id: text(100),
};
export type MembershipGrantRequest = Read<typeof GRANT_REQUEST>;

const GRANT_RESPONSE = {
  /** Premium now comes from this seat; false when the member already held premium otherwise. */
  granted: readBoolean,
  name: readString,
};
export type MembershipGrantResponse = Read<typeof GRANT_RESPONSE>;

/** Take away the premium one seat gave its member. */
const DROP_ITEM = { user_id: text(API_LIMITS.idMaxLength), sponsorship_id: text(100) };
export type MembershipDrop = Read<typeof DROP_ITEM>;

const DROP_RESPONSE = {
  /** The seats whose premium was dropped now (a missing one had nothing to drop). */
  downgraded: readStringArray,
};
export type MembershipDropResponse = Read<typeof DROP_RESPONSE>;

/** At most this many e-mails per question. */
export const MEMBERS_BY_EMAIL_MAX = 1000;

export const CREW_MEMBERS_BY_EMAIL = fieldsContract(
  'crew.members.by_email',
  ['sponsorship-api'],
  { emails: textList(MEMBERS_BY_EMAIL_MAX, API_LIMITS.emailMaxLength) },
  BY_EMAIL_RESPONSE,
);

export const CREW_MEMBERSHIP_GRANT = fieldsContract(
  'crew.membership.grant',
  ['sponsorship-api'],
  GRANT_REQUEST,
  GRANT_RESPONSE,
);

/** At most this many drops per call (reconcile cancels in batches of this size). */
export const MEMBERSHIP_DROP_MAX = 1000;

const DROP_REQUEST = { drops: listOf(DROP_ITEM, MEMBERSHIP_DROP_MAX) };
export type MembershipDropRequest = Read<typeof DROP_REQUEST>;

export const CREW_MEMBERSHIP_DROP = fieldsContract(
  'crew.membership.drop',
  ['sponsorship-api'],
  DROP_REQUEST,
  DROP_RESPONSE,
);

/** Reads `{ error: 'member_not_found' }`, a crew RPC's answer when its member does not exist (the caller decides what that means); undefined for anything else. */
export function crewRpcError(remote: unknown): 'member_not_found' | undefined {
  if (typeof remote !== 'object' || remote === null) return undefined;
  const code = optionalText(100)('crew rpc error', remote as Record<string, unknown>, 'error');
  return code === 'member_not_found' ? code : undefined;
}

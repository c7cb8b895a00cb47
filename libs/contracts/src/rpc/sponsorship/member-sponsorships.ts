import { fieldsContract, listOf, oneOf, text, timestampText, type Read } from '../../validate';
import { API_LIMITS } from '../../limits';

/** `sponsorship.member.sponsorships`: every seat a member ever held, closed ones too, for their account page. */
const SPONSORSHIP = {
  client_id: text(API_LIMITS.idMaxLength),
  /** The partner's display name as sponsorship-api last saw it (its client_id if never seen). */
  partner_name: text(500),
  status: oneOf(['active', 'ended', 'cancelled']),
  /** ISO 8601 UTC: when the seat gave the member premium. */
  since: timestampText,
  /** ISO 8601 UTC: when the seat closed, or for a live seat when its term ends. */
  until: timestampText,
};
export type MemberSponsorship = Read<typeof SPONSORSHIP>;

const RESPONSE = { sponsorships: listOf(SPONSORSHIP) };
export type MemberSponsorshipsResponse = Read<typeof RESPONSE>;

export const SPONSORSHIP_MEMBER_SPONSORSHIPS = fieldsContract(
  'sponsorship.member.sponsorships',
  ['consent-ui'],
  { user_id: text(API_LIMITS.idMaxLength) },
  RESPONSE,
);

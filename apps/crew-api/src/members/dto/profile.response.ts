import type { MembershipSource, MembershipTier } from '../membership.entity';
import type { ProfileRow } from '../members.repository';

/** The membership block of `/v1/me` (docs/rules.md, Crew records). */
export interface MembershipResponse {
  readonly tier: MembershipTier;
  readonly source: MembershipSource;
  readonly since: string;
  /** Only for the sponsoring partner. */
  readonly expires_at?: string | null;
  /** Only for the sponsoring partner, and then true. */
  readonly sponsored_by_you?: true;
}

/** `GET /v1/me` (docs/rules.md, Profile). */
export interface ProfileResponse {
  readonly user_id: string;
  readonly name: string;
  readonly role: string;
  readonly country: string;
  readonly photo_url: string | null;
  readonly record_updated_at: string;
  readonly membership: MembershipResponse;
}

/** The caller sponsors the member: only then does it see the term and `sponsored_by_you`. */
export function isSponsor(row: Pick<ProfileRow, 'sponsorClientId'>, clientId: string): boolean {
  return row.sponsorClientId !== null && row.sponsorClientId === clientId;
}

export function toProfileResponse(row: ProfileRow, clientId: string): ProfileResponse {
  const membership: MembershipResponse = isSponsor(row, clientId)
    ? {
        tier: row.tier,
        source: row.source,
        since: row.since,
        expires_at: row.expiresAt,
        sponsored_by_you: true,
      }
    : { tier: row.tier, source: row.source, since: row.since };
  return {
    user_id: row.userId,
    name: row.name,
    role: row.role,
    country: row.country,
    photo_url: row.photoUrl,
    record_updated_at: row.updatedAt,
    membership,
  };
}

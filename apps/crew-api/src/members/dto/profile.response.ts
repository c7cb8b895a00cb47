import type { MembershipResponse, ProfileResponse } from '@svc/contracts';
import type { ProfileRow } from '../members.repository';

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

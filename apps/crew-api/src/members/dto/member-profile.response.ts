import type { LockedMember } from '../../records/records.repository';

/** What the internal profile write answers: the profile as written. */
export interface MemberProfileResponse {
  readonly user_id: string;
  readonly email: string;
  readonly name: string;
  readonly role: string;
  readonly country: string;
  readonly photo_url: string | null;
  readonly record_updated_at: string;
}

export function toMemberProfileResponse(member: LockedMember): MemberProfileResponse {
  return {
    user_id: member.userId,
    email: member.email,
    name: member.name,
    role: member.role,
    country: member.country,
    photo_url: member.photoUrl,
    record_updated_at: member.recordUpdatedAt,
  };
}

import { callerEtag, type Representation } from '@svc/platform';
import type { MembershipResponse, ProfileResponse } from '@svc/contracts';
import { Injectable } from '@nestjs/common';
import type { Principal } from '@svc/security';
import { applyPatch, differs } from '../records/patch';
import { RecordWriter } from '../records/record-writer.service';
import { noCrewRecord, RecordsException } from '../records/records.exception';
import { toMemberProfileResponse, type MemberProfileResponse } from './dto/member-profile.response';
import type { UserLookupResponse } from './dto/user-lookup.dto';
import { MembersRepository, type ProfileChanges, type ProfileRow } from './members.repository';

/** Only the sponsoring client sees the term and `sponsored_by_you`. */
export function toProfileResponse(row: ProfileRow, clientId: string): ProfileResponse {
  const base = { tier: row.tier, source: row.source, since: row.since };
  const membership: MembershipResponse =
    row.sponsorClientId !== null && row.sponsorClientId === clientId
      ? { ...base, expires_at: row.expiresAt, sponsored_by_you: true }
      : base;
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

@Injectable()
export class MembersService {
  constructor(
    private readonly members: MembersRepository,
    private readonly writer: RecordWriter,
  ) {}

  /** `/v1/me`: the body depends on the calling partner, so the ETag covers the client and the scopes. */
  async profile(principal: Principal): Promise<Representation<ProfileResponse>> {
    const row = await this.members.profile(principal.user_id);
    if (!row) throw noCrewRecord(principal.user_id);
    return {
      body: () => toProfileResponse(row, principal.client_id),
      etag: callerEtag(principal, 'me.v1', row.userId, row.updatedAtExact),
      lastModified: new Date(row.updatedAt),
    };
  }

  /** Commits with its `user.profile.updated` event; a PATCH that changes nothing writes nothing. */
  updateProfile(userId: string, changes: ProfileChanges): Promise<MemberProfileResponse> {
    return this.writer.write(userId, async (write) => {
      const current = write.member;
      const next = applyPatch(current, changes);
      if (!differs(current, next)) return toMemberProfileResponse(current);
      const time = await write.stamp();
      await this.members.updateProfile(write.tx, userId, changes);
      write.emit('user.profile.updated');
      return toMemberProfileResponse({ ...next, recordUpdatedAt: time.iso });
    });
  }

  async findByEmail(email: string): Promise<UserLookupResponse> {
    const found = await this.members.findByEmail(email);
    if (!found) throw new RecordsException('member_not_found', 'No crew member has this e-mail address.');
    return { user_id: found.userId, email: found.email };
  }
}

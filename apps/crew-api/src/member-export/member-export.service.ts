import { Injectable } from '@nestjs/common';
import type { MemberRecordExport } from '@svc/contracts';
import { MembersRepository } from '../members/members.repository';
import { noCrewRecord } from '../records/records.exception';
import { MemberExportRepository } from './member-export.repository';

/** The member's own copy of their crew record (consent-ui's "Download my data"). */
@Injectable()
export class MemberExportService {
  constructor(
    private readonly members: MembersRepository,
    private readonly records: MemberExportRepository,
  ) {}

  async export(userId: string): Promise<MemberRecordExport> {
    const [profile, seaTime, vessels] = await Promise.all([
      this.members.profile(userId),
      this.records.seaTime(userId),
      this.records.vessels(userId),
    ]);
    if (!profile) throw noCrewRecord(userId);
    return {
      profile: {
        user_id: profile.userId,
        email: profile.email,
        name: profile.name,
        role: profile.role,
        country: profile.country,
        ...(profile.photoUrl === null ? {} : { photo_url: profile.photoUrl }),
        membership: {
          tier: profile.tier,
          source: profile.source,
          since: profile.since,
          ...(profile.expiresAt === null ? {} : { expires_at: profile.expiresAt }),
        },
        record_updated_at: profile.updatedAt,
      },
      sea_time: seaTime.map((e) => ({
        date: e.date,
        days_at_sea: e.daysAtSea,
        nautical_miles: e.nauticalMiles,
        role: e.role,
        verified: e.verified,
        recorded_at: e.recordedAt,
      })),
      vessels: vessels.map((v) => ({
        id: v.id,
        imo: v.imo,
        name: v.name,
        role: v.role,
        period_start: v.periodStart,
        period_end: v.periodEnd,
        days: v.days,
        nautical_miles: v.nauticalMiles,
      })),
    };
  }
}

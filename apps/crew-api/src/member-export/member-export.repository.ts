import { Injectable } from '@nestjs/common';
import { Sql } from '@svc/platform';
import type { CrewMember } from '../members/crew-member.entity';
import type { Membership } from '../members/membership.entity';
import { instant, periodsValidAt, utc } from '../records/sql-time';
import type { SeaTimeEntry } from '../sea-time/sea-time-entry.entity';
import type { PeriodRow } from '../vessels/vessels.repository';

type ExportProfileRow = CrewMember &
  Pick<Membership, 'tier' | 'source'> & { readonly since: string; readonly expiresAt: string | null };

type ExportSeaTimeRow = Omit<SeaTimeEntry, 'id' | 'userId' | 'createdAt'> & { readonly recordedAt: string };

type ExportPeriodRow = Omit<PeriodRow, 'startExact'>;

/** The whole of one member's record, for their data export: three reads, each by the member's index. */
@Injectable()
export class MemberExportRepository {
  constructor(private readonly sql: Sql) {}

  async profile(userId: string): Promise<ExportProfileRow | undefined> {
    const row = await this.sql.row<ExportProfileRow>(
      `SELECT m.user_id AS "userId", m.email, m.name, m.role, m.country, m.photo_url AS "photoUrl",
              coalesce(ms.tier, 'free') AS tier, coalesce(ms.source, 'self') AS source,
              ${utc('coalesce(ms.since, m.created_at)')} AS since, ${utc('ms.expires_at')} AS "expiresAt",
              ${utc('greatest(m.record_updated_at, ms.updated_at)')} AS "recordUpdatedAt"
         FROM crew_members m LEFT JOIN memberships ms ON ms.user_id = m.user_id
        WHERE m.user_id = $1`,
      [userId],
    );
    if (!row) return undefined;
    return {
      ...row,
      since: instant(row.since).iso,
      expiresAt: row.expiresAt === null ? null : instant(row.expiresAt).iso,
      recordUpdatedAt: instant(row.recordUpdatedAt).iso,
    };
  }

  async seaTime(userId: string): Promise<ExportSeaTimeRow[]> {
    const rows = await this.sql.rows<ExportSeaTimeRow>(
      `SELECT to_char(date, 'YYYY-MM-DD') AS date, days_at_sea AS "daysAtSea", nautical_miles AS "nauticalMiles",
              role, verified, ${utc('created_at')} AS "recordedAt"
         FROM sea_time_entries WHERE user_id = $1 ORDER BY date, created_at, id`,
      [userId],
    );
    return rows.map((r) => ({ ...r, recordedAt: instant(r.recordedAt).iso }));
  }

  /** The periods as they stand now (each in its current version), newest first as the API lists them. */
  async vessels(userId: string): Promise<ExportPeriodRow[]> {
    const rows = await this.sql.rows<ExportPeriodRow>(
      `SELECT period_id AS id, imo, name, role, ${utc('period_start')} AS "periodStart",
              ${utc('period_end')} AS "periodEnd", days, nautical_miles AS "nauticalMiles"
         FROM vessel_period_versions v
        WHERE v.user_id = $1 AND ${periodsValidAt('now()', 'v')}
        ORDER BY period_start DESC, period_id DESC`,
      [userId],
    );
    return rows.map((r) => ({
      ...r,
      periodStart: instant(r.periodStart).iso,
      periodEnd: instant(r.periodEnd).iso,
    }));
  }
}

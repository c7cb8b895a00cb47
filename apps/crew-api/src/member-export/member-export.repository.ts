import { Injectable } from '@nestjs/common';
import { Sql } from '@svc/platform';
import { instant, periodsValidAt, utc } from '../records/sql-time';
import type { SeaTimeEntry } from '../sea-time/sea-time-entry.entity';
import type { PeriodRow } from '../vessels/vessels.repository';

type ExportSeaTimeRow = Omit<SeaTimeEntry, 'id' | 'userId' | 'createdAt'> & { readonly recordedAt: string };

type ExportPeriodRow = Omit<PeriodRow, 'startExact'>;

/** The member's sea time and vessel history, for their data export: each read by the member's index. */
@Injectable()
export class MemberExportRepository {
  constructor(private readonly sql: Sql) {}

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

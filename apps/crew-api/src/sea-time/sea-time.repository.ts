import { Injectable } from '@nestjs/common';
import type { RecentTrendResponse, SeaTimeResponse } from '@svc/contracts';
import { Sql, type Transaction } from '@svc/platform';
import { instant, memberLookups, periodsValidAt, utc, type Instant } from '../records/sql-time';
import type { SeaTimeEntry } from './sea-time-entry.entity';

/** What the validators of the sea-time reads need, and all that a revalidation reads. */
export interface SeaTimeVersion {
  /** The record's last write time: the snapshot the totals and the trend are read as of. */
  readonly recordUpdatedAt: Instant;
  /** The current UTC month, `YYYY-MM`, by PostgreSQL's clock: the last of the trend's twelve. */
  readonly currentMonth: string;
}

export interface TotalsRow {
  readonly userId: string;
  readonly daysAtSea: number;
  readonly nauticalMiles: number;
  readonly verifiedDays: number;
  readonly verifiedMiles: number;
  readonly vesselsServed: number;
  readonly yearsActive: number;
  /** Built by PostgreSQL in the answer's own shape. */
  readonly byRole: SeaTimeResponse['by_role'];
}

export interface RecentRow {
  readonly userId: string;
  /** Built by PostgreSQL in the answer's own shape. */
  readonly months: RecentTrendResponse['months'];
}

/** Entries as of the snapshot `at`: stamped with their write time, later than any version seen (RecordsRepository.stamp). */
const ENTRY_AS_OF = (at: string) => `created_at <= ${at}`;

/** Set-based reads: one statement each, aggregated by PostgreSQL over the covering (user_id, date) index. */
@Injectable()
export class SeaTimeRepository {
  constructor(private readonly sql: Sql) {}

  private readonly versions = memberLookups((userIds) =>
    this.sql.prepared<{
      userId: string;
      recordUpdatedAt: string;
      currentMonth: string;
    }>(
      'sea-time-versions',
      `SELECT user_id AS "userId", ${utc('record_updated_at')} AS "recordUpdatedAt",
            to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM') AS "currentMonth"
       FROM crew_members WHERE user_id = ANY($1::text[])`,
      [userIds],
    ),
  );

  /** The member's record version now, or undefined for no such member. */
  async version(userId: string): Promise<SeaTimeVersion | undefined> {
    const row = await this.versions.submit(userId);
    return row && { recordUpdatedAt: instant(row.recordUpdatedAt), currentMonth: row.currentMonth };
  }

  /**
   * The totals as of `asOf`, in one query: entries grouped by role once, totals summed from the
   * groups. `years_active`: first to last entry date, both counted, in years of 365.25 days,
   * rounded to 2 decimals, whatever the gaps; `vessels_served`: distinct IMO numbers.
   */
  async totals(userId: string, asOf: string): Promise<TotalsRow | undefined> {
    const rows = await this.sql.prepared<TotalsRow>(
      'sea-time-totals-as-of',
      `WITH m AS (
         SELECT user_id FROM crew_members WHERE user_id = $1
       ), by_role AS (
         SELECT role,
                sum(days_at_sea) AS days,
                sum(nautical_miles) AS miles,
                coalesce(sum(days_at_sea) FILTER (WHERE verified), 0) AS verified_days,
                coalesce(sum(nautical_miles) FILTER (WHERE verified), 0) AS verified_miles,
                min(date) AS first_day,
                max(date) AS last_day
           FROM sea_time_entries
          WHERE user_id = $1 AND ${ENTRY_AS_OF('$2::timestamptz')}
          GROUP BY role
       )
       SELECT m.user_id AS "userId",
              t.days_at_sea::float8 AS "daysAtSea", t.nautical_miles::float8 AS "nauticalMiles",
              t.verified_days::float8 AS "verifiedDays", t.verified_miles::float8 AS "verifiedMiles",
              t.years_active::float8 AS "yearsActive", t.by_role AS "byRole",
              (SELECT count(DISTINCT imo)::int FROM vessel_period_versions
                WHERE user_id = $1 AND ${periodsValidAt('$2::timestamptz')}) AS "vesselsServed"
         FROM m
        CROSS JOIN (
          SELECT coalesce(sum(days), 0) AS days_at_sea,
                 coalesce(sum(miles), 0) AS nautical_miles,
                 coalesce(sum(verified_days), 0) AS verified_days,
                 coalesce(sum(verified_miles), 0) AS verified_miles,
                 coalesce(round((max(last_day) - min(first_day) + 1) / 365.25, 2), 0) AS years_active,
                 coalesce(json_agg(json_build_object('role', role, 'days', days) ORDER BY days DESC, role COLLATE "C"), '[]')
                   AS by_role
            FROM by_role
        ) t`,
      [userId, asOf],
    );
    return rows[0];
  }

  /** The twelve UTC months ending with `month`, oldest first, zeros where nothing was recorded, as of `asOf`. */
  async recent(userId: string, asOf: string, month: string): Promise<RecentRow | undefined> {
    const rows = await this.sql.prepared<RecentRow>(
      'sea-time-recent-as-of',
      `WITH m AS (
         SELECT user_id, to_date($3, 'YYYY-MM') AS this_month
           FROM crew_members WHERE user_id = $1
       ), months AS (
         SELECT (m.this_month - make_interval(months => k))::date AS month
           FROM m, generate_series(11, 0, -1) AS k
       ), sums AS (
         SELECT date_trunc('month', e.date::timestamp)::date AS month,
                sum(e.days_at_sea) AS days,
                sum(e.nautical_miles) AS miles
           FROM sea_time_entries e, m
          WHERE e.user_id = $1 AND e.${ENTRY_AS_OF('$2::timestamptz')}
            AND e.date >= (m.this_month - interval '11 months')::date
            AND e.date < (m.this_month + interval '1 month')::date
          GROUP BY 1
       )
       SELECT m.user_id AS "userId",
              (SELECT json_agg(json_build_object(
                        'month', to_char(months.month, 'YYYY-MM'),
                        'days_at_sea', coalesce(sums.days, 0),
                        'nautical_miles', coalesce(sums.miles, 0)) ORDER BY months.month)
                 FROM months LEFT JOIN sums ON sums.month = months.month) AS months
         FROM m`,
      [userId, asOf, month],
    );
    return rows[0];
  }

  async insertEntry(tx: Transaction, entry: SeaTimeEntry): Promise<void> {
    await this.sql.rows(
      `INSERT INTO sea_time_entries (id, user_id, date, days_at_sea, nautical_miles, role, verified, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        entry.id,
        entry.userId,
        entry.date,
        entry.daysAtSea,
        entry.nauticalMiles,
        entry.role,
        entry.verified,
        entry.createdAt,
      ],
      tx,
    );
  }
}

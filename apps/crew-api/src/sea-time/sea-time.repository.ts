import { Injectable } from '@nestjs/common';
import type { RecentTrendResponse, SeaTimeResponse } from '@svc/contracts';
import { Sql, type Transaction } from '@svc/platform';
import { instant, utc } from '../records/sql-time';
import type { SeaTimeEntry } from './sea-time-entry.entity';

export interface TotalsRow {
  readonly userId: string;
  readonly recordUpdatedAt: string;
  readonly recordUpdatedAtExact: string;
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
  readonly recordUpdatedAt: string;
  readonly recordUpdatedAtExact: string;
  /** The current UTC month, `YYYY-MM`: the last of the twelve. */
  readonly currentMonth: string;
  /** Built by PostgreSQL in the answer's own shape. */
  readonly months: RecentTrendResponse['months'];
}

/** `recordUpdatedAt` as PostgreSQL's text becomes the API's (ms) and the exact one (µs). */
function withInstant<T extends { readonly recordUpdatedAt: string }>(
  row: T,
): T & { readonly recordUpdatedAtExact: string } {
  const updated = instant(row.recordUpdatedAt);
  return { ...row, recordUpdatedAt: updated.iso, recordUpdatedAtExact: updated.exact };
}

/**
 * Set-based reads of the sea-time record: one statement each, aggregated by PostgreSQL over the
 * (user_id, date) index that carries every column they read. No history is loaded into memory.
 */
@Injectable()
export class SeaTimeRepository {
  constructor(private readonly sql: Sql) {}

  /**
   * Totals, verified subset, vessels served, years active and days by role, in one query: the
   * entries are grouped by role once and the totals are sums of those groups.
   *
   * `years_active` is the span of recorded sea time: from the earliest to the latest entry date,
   * both days counted, in years of 365.25 days, rounded to 2 decimals (0 without entries). A
   * member with entries from 2015-01-01 to 2024-12-31 has been active 10.00 years, whatever the
   * gaps between.
   *
   * `vessels_served` counts the distinct IMO numbers of the member's current vessel periods.
   */
  async totals(userId: string): Promise<TotalsRow | undefined> {
    const rows = await this.sql.prepared<Omit<TotalsRow, 'recordUpdatedAtExact'>>(
      'sea-time-totals',
      `WITH m AS (
         SELECT user_id, record_updated_at FROM crew_members WHERE user_id = $1
       ), by_role AS (
         SELECT role,
                sum(days_at_sea) AS days,
                sum(nautical_miles) AS miles,
                coalesce(sum(days_at_sea) FILTER (WHERE verified), 0) AS verified_days,
                coalesce(sum(nautical_miles) FILTER (WHERE verified), 0) AS verified_miles,
                min(date) AS first_day,
                max(date) AS last_day
           FROM sea_time_entries
          WHERE user_id = $1
          GROUP BY role
       )
       SELECT m.user_id AS "userId",
              ${utc('m.record_updated_at')} AS "recordUpdatedAt",
              t.days_at_sea::float8 AS "daysAtSea", t.nautical_miles::float8 AS "nauticalMiles",
              t.verified_days::float8 AS "verifiedDays", t.verified_miles::float8 AS "verifiedMiles",
              t.years_active::float8 AS "yearsActive", t.by_role AS "byRole",
              (SELECT count(DISTINCT imo)::int FROM vessel_period_versions
                WHERE user_id = $1 AND valid_to IS NULL) AS "vesselsServed"
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
      [userId],
    );
    return rows[0] && withInstant(rows[0]);
  }

  /**
   * The twelve UTC calendar months ending with the current one, oldest first, zeros where
   * nothing was recorded: a generate_series of months left-joined to the entries of the window.
   */
  async recent(userId: string): Promise<RecentRow | undefined> {
    const rows = await this.sql.prepared<Omit<RecentRow, 'recordUpdatedAtExact'>>(
      'sea-time-recent',
      `WITH m AS (
         SELECT user_id, record_updated_at,
                date_trunc('month', now() AT TIME ZONE 'UTC')::date AS this_month
           FROM crew_members WHERE user_id = $1
       ), months AS (
         SELECT (m.this_month - make_interval(months => k))::date AS month
           FROM m, generate_series(11, 0, -1) AS k
       ), sums AS (
         SELECT date_trunc('month', e.date::timestamp)::date AS month,
                sum(e.days_at_sea) AS days,
                sum(e.nautical_miles) AS miles
           FROM sea_time_entries e, m
          WHERE e.user_id = $1
            AND e.date >= (m.this_month - interval '11 months')::date
            AND e.date < (m.this_month + interval '1 month')::date
          GROUP BY 1
       )
       SELECT m.user_id AS "userId",
              ${utc('m.record_updated_at')} AS "recordUpdatedAt",
              to_char(m.this_month, 'YYYY-MM') AS "currentMonth",
              (SELECT json_agg(json_build_object(
                        'month', to_char(months.month, 'YYYY-MM'),
                        'days_at_sea', coalesce(sums.days, 0),
                        'nautical_miles', coalesce(sums.miles, 0)) ORDER BY months.month)
                 FROM months LEFT JOIN sums ON sums.month = months.month) AS months
         FROM m`,
      [userId],
    );
    return rows[0] && withInstant(rows[0]);
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

import { Injectable } from '@nestjs/common';
import { Sql, type Transaction } from '@svc/platform';
import { instant, memberLookups, periodsValidAt, utc } from '../records/sql-time';
import type { PeriodVersion } from './vessel-period-version.entity';

export type { PeriodVersion };

/** A period as a page shows it: its times as the API's text (ms), its start also exact (µs, the keyset). */
export type PeriodRow = Omit<
  PeriodVersion,
  'version' | 'userId' | 'validFrom' | 'periodStart' | 'periodEnd'
> & {
  readonly periodStart: string;
  readonly periodEnd: string;
  readonly startExact: string;
};

export interface VesselsPage {
  readonly userId: string;
  /** The snapshot read: shown (ms) and exact (µs, for the cursor and the ETag). */
  readonly asOf: string;
  readonly asOfExact: string;
  readonly periods: PeriodRow[];
}

/** A page's row: the member's snapshot, and a period (all null without one), times as PostgreSQL's text. */
type PageRecord = Omit<PeriodRow, 'id' | 'startExact'> & { userId: string; asOf: string; id: string | null };

@Injectable()
export class VesselsRepository {
  constructor(private readonly sql: Sql) {}

  private readonly snapshots = memberLookups((userIds) =>
    this.sql.prepared<{ userId: string; asOf: string }>(
      'vessels-snapshots',
      `SELECT user_id AS "userId", ${utc('vessels_updated_at')} AS "asOf"
       FROM crew_members WHERE user_id = ANY($1::text[])`,
      [userIds],
    ),
  );

  /** The member's vessel-history snapshot now (exact), or undefined for no such member. */
  async snapshot(userId: string): Promise<string | undefined> {
    const row = await this.snapshots.submit(userId);
    return row && instant(row.asOf).exact;
  }

  /**
   * One page of the snapshot `asOf`, newest first, after `after` or from 'infinity' (one statement,
   * the keyset an index condition on the covering index); undefined for no such member.
   */
  async page(
    userId: string,
    limit: number,
    asOf: string,
    after?: { readonly start: string; readonly id: string },
  ): Promise<VesselsPage | undefined> {
    const rows = await this.sql.prepared<PageRecord>(
      'vessels-page',
      `SELECT m.user_id AS "userId",
              ${utc('s.as_of')} AS "asOf", p.period_id AS id, p.imo, p.name, p.role,
              ${utc('p.period_start')} AS "periodStart", ${utc('p.period_end')} AS "periodEnd",
              p.days, p.nautical_miles AS "nauticalMiles"
         FROM crew_members m
        CROSS JOIN LATERAL (SELECT $2::timestamptz AS as_of) s
         LEFT JOIN LATERAL (
           SELECT v.period_id, v.imo, v.name, v.role, v.period_start, v.period_end, v.days, v.nautical_miles
             FROM vessel_period_versions v
            WHERE v.user_id = m.user_id AND ${periodsValidAt('s.as_of', 'v')}
              AND (v.period_start, v.period_id) < ($3::timestamptz, $4::text)
            ORDER BY v.period_start DESC, v.period_id DESC
            LIMIT $5
         ) p ON true
        WHERE m.user_id = $1
        ORDER BY p.period_start DESC, p.period_id DESC`,
      [userId, asOf, after?.start ?? 'infinity', after?.id ?? '', limit],
    );
    const first = rows[0];
    if (!first) return undefined;
    const snapshot = instant(first.asOf);
    return {
      userId: first.userId,
      asOf: snapshot.iso,
      asOfExact: snapshot.exact,
      periods: rows
        .filter((r) => r.id !== null)
        .map((r) => {
          const start = instant(r.periodStart);
          return {
            id: r.id!,
            imo: r.imo,
            name: r.name,
            role: r.role,
            periodStart: start.iso,
            periodEnd: instant(r.periodEnd).iso,
            days: r.days,
            nauticalMiles: r.nauticalMiles,
            startExact: start.exact,
          };
        }),
    };
  }

  async current(tx: Transaction, userId: string, periodId: string): Promise<PeriodVersion | undefined> {
    const v = await this.sql.row<Omit<PeriodVersion, 'userId'>>(
      `SELECT period_id AS id, version, imo, name, role, period_start AS "periodStart", period_end AS "periodEnd",
              days, nautical_miles AS "nauticalMiles", ${utc('valid_from')} AS "validFrom"
         FROM vessel_period_versions
        WHERE period_id = $1 AND user_id = $2 AND valid_to IS NULL`,
      [periodId, userId],
      tx,
    );
    return v ? { ...v, userId, validFrom: instant(v.validFrom).exact } : undefined;
  }

  /** Distinct IMO numbers of the member's current periods (`vessels_served`). */
  async vesselsServed(tx: Transaction, userId: string): Promise<number> {
    const served = await this.sql.row<{ n: string }>(
      `SELECT count(DISTINCT imo) AS n FROM vessel_period_versions WHERE user_id = $1 AND valid_to IS NULL`,
      [userId],
      tx,
    );
    return Number(served!.n);
  }

  /** Ends a version's validity at the write time (an amendment's first half). */
  async close(tx: Transaction, periodId: string, version: number, at: string): Promise<void> {
    await this.sql.affected(
      `UPDATE vessel_period_versions SET valid_to = $3
        WHERE period_id = $1 AND version = $2 AND valid_to IS NULL`,
      [periodId, version, at],
      tx,
    );
  }

  async insert(tx: Transaction, v: PeriodVersion): Promise<void> {
    await this.sql.rows(
      `INSERT INTO vessel_period_versions
         (period_id, version, user_id, imo, name, role, period_start, period_end, days, nautical_miles, valid_from)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        v.id,
        v.version,
        v.userId,
        v.imo,
        v.name,
        v.role,
        v.periodStart,
        v.periodEnd,
        v.days,
        v.nauticalMiles,
        v.validFrom,
      ],
      tx,
    );
  }
}

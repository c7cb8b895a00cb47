import { Injectable } from '@nestjs/common';
import { Sql, type Transaction } from '@svc/platform';
import { instant, utc } from '../records/sql-time';

/** A vessel period as the API shows it, plus its keyset position with microseconds. */
export interface PeriodRow {
  readonly id: string;
  readonly imo: string;
  readonly name: string;
  readonly role: string;
  readonly periodStart: string;
  readonly periodEnd: string;
  readonly days: number;
  readonly nauticalMiles: number;
  readonly startExact: string;
}

export interface VesselsPage {
  readonly userId: string;
  /** The snapshot read: shown (ms) and exact (µs, for the cursor and the ETag). */
  readonly asOf: string;
  readonly asOfExact: string;
  readonly periods: PeriodRow[];
}

/** The current version of a period, for an amendment. */
export interface CurrentPeriod {
  readonly id: string;
  readonly version: number;
  readonly imo: string;
  readonly name: string;
  readonly role: string;
  readonly periodStart: Date;
  readonly periodEnd: Date;
  readonly days: number;
  readonly nauticalMiles: number;
  /** When this version was written (µs). */
  readonly validFrom: string;
}

export interface PeriodVersion {
  readonly id: string;
  readonly version: number;
  readonly userId: string;
  readonly imo: string;
  readonly name: string;
  readonly role: string;
  readonly periodStart: Date;
  readonly periodEnd: Date;
  readonly days: number;
  readonly nauticalMiles: number;
  /** The write time (µs). */
  readonly validFrom: string;
}

const PAGE_COLUMNS =
  'v.period_id, v.imo, v.name, v.role, v.period_start, v.period_end, v.days, v.nautical_miles';

/** The versions valid at the snapshot `at`: the periods as they were at that instant. */
const VALID_AT = (at: string) => `v.valid_from <= ${at} AND (v.valid_to IS NULL OR v.valid_to > ${at})`;

const PAGE_SELECT = `SELECT m.user_id,
              ${utc('s.as_of')} AS as_of, p.period_id, p.imo, p.name, p.role,
              ${utc('p.period_start')} AS period_start, ${utc('p.period_end')} AS period_end,
              p.days, p.nautical_miles`;

type PageRecord = {
  user_id: string;
  as_of: string;
  period_id: string | null;
  imo: string;
  name: string;
  role: string;
  period_start: string;
  period_end: string;
  days: number;
  nautical_miles: number;
};

@Injectable()
export class VesselsRepository {
  constructor(private readonly reads: Sql) {}

  /**
   * One page in one query, `limit` rows at most, newest first (period_start DESC, id DESC).
   * Without `after` it is a scan's first page: the snapshot is the member's vessels_updated_at,
   * read in the same statement. With `after` the snapshot is the cursor's and the page starts
   * after its keyset position. Served by the (user_id, period_start DESC, period_id DESC) index,
   * which carries every column read.
   */
  async page(
    userId: string,
    limit: number,
    after?: { readonly asOf: string; readonly start: string; readonly id: string },
  ): Promise<VesselsPage | undefined> {
    const rows = after
      ? await this.reads.prepared<PageRecord>(
          'vessels-next-page',
          `${PAGE_SELECT}
             FROM crew_members m
            CROSS JOIN (SELECT $2::timestamptz AS as_of) s
             LEFT JOIN LATERAL (
               SELECT ${PAGE_COLUMNS} FROM vessel_period_versions v
                WHERE v.user_id = m.user_id AND ${VALID_AT('s.as_of')}
                  AND (v.period_start, v.period_id) < ($3::timestamptz, $4::text)
                ORDER BY v.period_start DESC, v.period_id DESC
                LIMIT $5
             ) p ON true
            WHERE m.user_id = $1
            ORDER BY p.period_start DESC, p.period_id DESC`,
          [userId, after.asOf, after.start, after.id, limit],
        )
      : await this.reads.prepared<PageRecord>(
          'vessels-first-page',
          `${PAGE_SELECT}
             FROM crew_members m
            CROSS JOIN LATERAL (SELECT m.vessels_updated_at AS as_of) s
             LEFT JOIN LATERAL (
               SELECT ${PAGE_COLUMNS} FROM vessel_period_versions v
                WHERE v.user_id = m.user_id AND ${VALID_AT('s.as_of')}
                ORDER BY v.period_start DESC, v.period_id DESC
                LIMIT $2
             ) p ON true
            WHERE m.user_id = $1
            ORDER BY p.period_start DESC, p.period_id DESC`,
          [userId, limit],
        );
    const first = rows[0];
    if (!first) return undefined;
    const asOf = instant(first.as_of);
    return {
      userId: first.user_id,
      asOf: asOf.iso,
      asOfExact: asOf.exact,
      periods: rows
        .filter((r) => r.period_id !== null)
        .map((r) => {
          const start = instant(r.period_start);
          return {
            id: r.period_id!,
            imo: r.imo,
            name: r.name,
            role: r.role,
            periodStart: start.iso,
            periodEnd: instant(r.period_end).iso,
            days: r.days,
            nauticalMiles: r.nautical_miles,
            startExact: start.exact,
          };
        }),
    };
  }

  async current(tx: Transaction, userId: string, periodId: string): Promise<CurrentPeriod | undefined> {
    const rows = await tx.query<
      {
        period_id: string;
        version: number;
        imo: string;
        name: string;
        role: string;
        period_start: Date;
        period_end: Date;
        days: number;
        nautical_miles: number;
        valid_from: string;
      }[]
    >(
      `SELECT period_id, version, imo, name, role, period_start, period_end, days, nautical_miles,
              ${utc('valid_from')} AS valid_from
         FROM vessel_period_versions
        WHERE period_id = $1 AND user_id = $2 AND valid_to IS NULL`,
      [periodId, userId],
    );
    const r = rows[0];
    return r
      ? {
          id: r.period_id,
          version: r.version,
          imo: r.imo,
          name: r.name,
          role: r.role,
          periodStart: r.period_start,
          periodEnd: r.period_end,
          days: r.days,
          nauticalMiles: r.nautical_miles,
          validFrom: instant(r.valid_from).exact,
        }
      : undefined;
  }

  /** Distinct IMO numbers of the member's current periods (`vessels_served`). */
  async vesselsServed(tx: Transaction, userId: string): Promise<number> {
    const rows = await tx.query<{ n: string }[]>(
      `SELECT count(DISTINCT imo) AS n FROM vessel_period_versions WHERE user_id = $1 AND valid_to IS NULL`,
      [userId],
    );
    return Number(rows[0].n);
  }

  /** Ends a version's validity at the write time (an amendment's first half). */
  async close(tx: Transaction, periodId: string, version: number, at: string): Promise<void> {
    await tx.query(
      `UPDATE vessel_period_versions SET valid_to = $3
        WHERE period_id = $1 AND version = $2 AND valid_to IS NULL`,
      [periodId, version, at],
    );
  }

  async insert(tx: Transaction, v: PeriodVersion): Promise<void> {
    await tx.query(
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
    );
  }
}

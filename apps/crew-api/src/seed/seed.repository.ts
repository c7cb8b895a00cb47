import type { Sql, TransactionRunner } from '@svc/platform';
import type { SeedMember } from './sandbox-records';

/** Writes the sandbox records directly (no outbox); an existing member only gets a missing membership. */
export class SeedRepository {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly sql: Sql,
  ) {}

  /** True when the member's record was written now, false when it was there already. */
  seedMember(m: SeedMember): Promise<boolean> {
    return this.transactions.run(async (tx) => {
      // now() is the transaction's start: the record's times and its versions' valid_from agree.
      const created = await this.sql.rows(
        `INSERT INTO crew_members (user_id, email, name, role, country, photo_url,
                                   record_updated_at, vessels_updated_at, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, now(), now(), now())
         ON CONFLICT (user_id) DO NOTHING
         RETURNING user_id`,
        [m.userId, m.email, m.name, m.role, m.country, m.photoUrl],
        tx,
      );
      await this.sql.rows(
        `INSERT INTO memberships (user_id, tier, source, since, sponsor_client_id, sponsorship_id, expires_at,
                                  updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, now())
         ON CONFLICT (user_id) DO NOTHING`,
        [
          m.userId,
          m.membership.tier,
          m.membership.source,
          m.membership.since,
          m.membership.sponsorClientId,
          m.membership.sponsorshipId,
          m.membership.expiresAt,
        ],
        tx,
      );
      if (created.length === 0) return false;
      if (m.periods.length > 0) {
        await this.sql.rows(
          `INSERT INTO vessel_period_versions
             (period_id, version, user_id, imo, name, role, period_start, period_end, days, nautical_miles, valid_from)
           SELECT id, 1, $1, imo, name, role, "periodStart", "periodEnd", days, "nauticalMiles", now()
             FROM jsonb_to_recordset($2::jsonb) AS p(id text, imo text, name text, role text,
                  "periodStart" timestamptz, "periodEnd" timestamptz, days int, "nauticalMiles" int)
           ON CONFLICT DO NOTHING`,
          [m.userId, JSON.stringify(m.periods)],
          tx,
        );
      }
      if (m.entries.length > 0) {
        await this.sql.rows(
          `INSERT INTO sea_time_entries (id, user_id, date, days_at_sea, nautical_miles, role, verified, created_at)
           SELECT id, $1, date, "daysAtSea", "nauticalMiles", role, verified, now()
             FROM jsonb_to_recordset($2::jsonb)
                  AS e(id text, date date, "daysAtSea" int, "nauticalMiles" int, role text, verified boolean)
           ON CONFLICT DO NOTHING`,
          [m.userId, JSON.stringify(m.entries)],
          tx,
        );
      }
      return true;
    });
  }
}

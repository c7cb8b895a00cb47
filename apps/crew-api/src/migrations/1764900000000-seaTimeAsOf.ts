import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The sea-time totals and trend are read as of a record version (docs/architecture.md, "Crew
 * records"): entries stamped at or before it. The index they are aggregated over carries the
 * entries' write time too, so those reads stay index-only scans.
 */
export class SeaTimeAsOf1764900000000 implements MigrationInterface {
  name = 'SeaTimeAsOf1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX "sea_time_entries_by_member_date_as_of" ON "crew"."sea_time_entries" ("user_id", "date")
         INCLUDE ("days_at_sea", "nautical_miles", "verified", "role", "created_at")`,
    );
    await q.query(`DROP INDEX "crew"."sea_time_entries_by_member_date"`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX "sea_time_entries_by_member_date" ON "crew"."sea_time_entries" ("user_id", "date")
         INCLUDE ("days_at_sea", "nautical_miles", "verified", "role")`,
    );
    await q.query(`DROP INDEX "crew"."sea_time_entries_by_member_date_as_of"`);
  }
}

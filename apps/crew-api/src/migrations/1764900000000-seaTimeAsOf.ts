import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Sea time is read as of a record version: the index carries the entries' write time, to stay index-only. */
export class SeaTimeAsOf1764900000000 implements MigrationInterface {
  name = 'SeaTimeAsOf1764900000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE INDEX "sea_time_entries_by_member_date_as_of" ON "crew"."sea_time_entries" ("user_id", "date")
        INCLUDE ("days_at_sea", "nautical_miles", "verified", "role", "created_at");
      DROP INDEX "crew"."sea_time_entries_by_member_date"`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE INDEX "sea_time_entries_by_member_date" ON "crew"."sea_time_entries" ("user_id", "date")
        INCLUDE ("days_at_sea", "nautical_miles", "verified", "role");
      DROP INDEX "crew"."sea_time_entries_by_member_date_as_of"`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The crew record: profile, membership, sea-time entries and vessel periods.
 *
 * Vessel periods are an append-only version table: an amendment closes the current version
 * (`valid_to` = the write time) and inserts the next, so a paginated scan can read the periods as
 * they were at the instant its first page saw (`as_of`) while writers carry on. `record_updated_at`
 * and `vessels_updated_at` are the write times of the member's latest change (any, and of the
 * vessel periods); writes take them under the member row's lock, so they grow in commit order.
 */
export class CreateCrewRecords1763770000000 implements MigrationInterface {
  name = 'CreateCrewRecords1763770000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "crew"."crew_members" (
        "user_id" text PRIMARY KEY,
        "email" text NOT NULL UNIQUE CHECK ("email" = lower(btrim("email"))),
        "name" text NOT NULL,
        "role" text NOT NULL,
        "country" text NOT NULL,
        "photo_url" text,
        "record_updated_at" timestamptz NOT NULL DEFAULT now(),
        "vessels_updated_at" timestamptz NOT NULL DEFAULT now(),
        "created_at" timestamptz NOT NULL DEFAULT now(),
        CHECK ("vessels_updated_at" <= "record_updated_at")
      )`);
    await q.query(`
      CREATE TABLE "crew"."memberships" (
        "user_id" text PRIMARY KEY REFERENCES "crew"."crew_members" ("user_id") ON DELETE CASCADE,
        "tier" text NOT NULL CHECK ("tier" IN ('free', 'premium')),
        "source" text NOT NULL CHECK ("source" IN ('self', 'sponsored', 'vessel')),
        "since" timestamptz NOT NULL,
        "sponsor_client_id" text,
        "expires_at" timestamptz,
        "updated_at" timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE "crew"."sea_time_entries" (
        "id" text PRIMARY KEY,
        "user_id" text NOT NULL REFERENCES "crew"."crew_members" ("user_id") ON DELETE CASCADE,
        "date" date NOT NULL,
        "days_at_sea" integer NOT NULL CHECK ("days_at_sea" >= 0),
        "nautical_miles" integer NOT NULL CHECK ("nautical_miles" >= 0),
        "role" text NOT NULL,
        "verified" boolean NOT NULL DEFAULT false,
        "created_at" timestamptz NOT NULL DEFAULT now()
      )`);
    // Totals, by-role and the trend read only this index (index-only scans).
    await q.query(
      `CREATE INDEX "sea_time_entries_by_member_date" ON "crew"."sea_time_entries" ("user_id", "date")
         INCLUDE ("days_at_sea", "nautical_miles", "verified", "role")`,
    );
    await q.query(`
      CREATE TABLE "crew"."vessel_period_versions" (
        "period_id" text COLLATE "C" NOT NULL,
        "version" integer NOT NULL CHECK ("version" >= 1),
        "user_id" text NOT NULL REFERENCES "crew"."crew_members" ("user_id") ON DELETE CASCADE,
        "imo" text NOT NULL,
        "name" text NOT NULL,
        "role" text NOT NULL,
        "period_start" timestamptz NOT NULL,
        "period_end" timestamptz NOT NULL,
        "days" integer NOT NULL CHECK ("days" >= 0),
        "nautical_miles" integer NOT NULL CHECK ("nautical_miles" >= 0),
        "valid_from" timestamptz NOT NULL,
        "valid_to" timestamptz,
        PRIMARY KEY ("period_id", "version"),
        CHECK ("period_end" >= "period_start"),
        CHECK ("valid_to" IS NULL OR "valid_to" > "valid_from")
      )`);
    // period_id sorts byte-wise ("C"): the keyset order of ids is the same everywhere.
    // The page of /v1/me/vessels: keyset order, and every column the page shows or filters on.
    await q.query(
      `CREATE INDEX "vessel_period_versions_page" ON "crew"."vessel_period_versions"
         ("user_id", "period_start" DESC, "period_id" DESC)
         INCLUDE ("imo", "name", "role", "period_end", "days", "nautical_miles", "valid_from", "valid_to")`,
    );
    // At most one current version per period; finds it for an amendment.
    await q.query(
      `CREATE UNIQUE INDEX "vessel_period_versions_current" ON "crew"."vessel_period_versions" ("period_id")
         WHERE "valid_to" IS NULL`,
    );
    // vessels_served: distinct IMOs of the member's current periods.
    await q.query(
      `CREATE INDEX "vessel_period_versions_current_imo" ON "crew"."vessel_period_versions" ("user_id", "imo")
         WHERE "valid_to" IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['vessel_period_versions', 'sea_time_entries', 'memberships', 'crew_members']) {
      await q.query(`DROP TABLE "crew"."${table}"`);
    }
  }
}

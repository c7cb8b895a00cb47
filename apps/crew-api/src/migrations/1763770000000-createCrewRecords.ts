import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The crew record. Vessel periods are append-only versions, so a paginated scan reads them as of its
 * first page while writers carry on; `*_updated_at` are set under the member's row lock (commit order).
 */
export class CreateCrewRecords1763770000000 implements MigrationInterface {
  name = 'CreateCrewRecords1763770000000';
  async up(q: QueryRunner): Promise<void> {
    // Totals, by-role and trend are index-only scans; period_id sorts byte-wise ("C") for one keyset order.
    // _page: /v1/me/vessels' order and columns; _current: one per period; _current_imo: vessels_served.
    await q.query(`
      CREATE TABLE "crew"."crew_members" (
        "user_id" text PRIMARY KEY,
        "email" text NOT NULL UNIQUE CHECK ("email" = lower(btrim("email"))),
        "name" text NOT NULL, "role" text NOT NULL, "country" text NOT NULL, "photo_url" text,
        "record_updated_at" timestamptz NOT NULL DEFAULT now(),
        "vessels_updated_at" timestamptz NOT NULL DEFAULT now(),
        "created_at" timestamptz NOT NULL DEFAULT now(),
        CHECK ("vessels_updated_at" <= "record_updated_at")
      );
      CREATE TABLE "crew"."memberships" (
        "user_id" text PRIMARY KEY REFERENCES "crew"."crew_members" ("user_id") ON DELETE CASCADE,
        "tier" text NOT NULL CHECK ("tier" IN ('free', 'premium')),
        "source" text NOT NULL CHECK ("source" IN ('self', 'sponsored', 'vessel')),
        "since" timestamptz NOT NULL, "sponsor_client_id" text, "expires_at" timestamptz,
        "updated_at" timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE "crew"."sea_time_entries" (
        "id" text PRIMARY KEY,
        "user_id" text NOT NULL REFERENCES "crew"."crew_members" ("user_id") ON DELETE CASCADE,
        "date" date NOT NULL,
        "days_at_sea" integer NOT NULL CHECK ("days_at_sea" >= 0),
        "nautical_miles" integer NOT NULL CHECK ("nautical_miles" >= 0),
        "role" text NOT NULL, "verified" boolean NOT NULL DEFAULT false,
        "created_at" timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX "sea_time_entries_by_member_date" ON "crew"."sea_time_entries" ("user_id", "date")
        INCLUDE ("days_at_sea", "nautical_miles", "verified", "role");
      CREATE TABLE "crew"."vessel_period_versions" (
        "period_id" text COLLATE "C" NOT NULL,
        "version" integer NOT NULL CHECK ("version" >= 1),
        "user_id" text NOT NULL REFERENCES "crew"."crew_members" ("user_id") ON DELETE CASCADE,
        "imo" text NOT NULL, "name" text NOT NULL, "role" text NOT NULL,
        "period_start" timestamptz NOT NULL, "period_end" timestamptz NOT NULL,
        "days" integer NOT NULL CHECK ("days" >= 0),
        "nautical_miles" integer NOT NULL CHECK ("nautical_miles" >= 0),
        "valid_from" timestamptz NOT NULL, "valid_to" timestamptz,
        PRIMARY KEY ("period_id", "version"),
        CHECK ("period_end" >= "period_start"),
        CHECK ("valid_to" IS NULL OR "valid_to" > "valid_from")
      );
      CREATE INDEX "vessel_period_versions_page" ON "crew"."vessel_period_versions"
        ("user_id", "period_start" DESC, "period_id" DESC)
        INCLUDE ("imo", "name", "role", "period_end", "days", "nautical_miles", "valid_from", "valid_to");
      CREATE UNIQUE INDEX "vessel_period_versions_current" ON "crew"."vessel_period_versions" ("period_id")
        WHERE "valid_to" IS NULL;
      CREATE INDEX "vessel_period_versions_current_imo" ON "crew"."vessel_period_versions" ("user_id", "imo")
        WHERE "valid_to" IS NULL`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "crew"."vessel_period_versions", "crew"."sea_time_entries",
      "crew"."memberships", "crew"."crew_members"`);
  }
}

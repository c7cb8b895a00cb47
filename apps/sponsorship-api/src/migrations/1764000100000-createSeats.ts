import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Seats and their history (docs/rules.md, Sponsorship): live seats are unique per partner by e-mail and
 * external_ref, so two provisions cannot both create one; provisions lock `sponsors`, so the quota holds.
 */
export class CreateSeats1764000100000 implements MigrationInterface {
  name = 'CreateSeats1764000100000';
  async up(q: QueryRunner): Promise<void> {
    // seats_list(_by_status): newest first, keyset on (invited_at, sponsorship_id). seats_by_member:
    // member-left; seats_invited_email: activation when a member signs up; seats_live_expiry: expiry.
    await q.query(`
      CREATE TABLE "sponsorship"."sponsors" (
        "client_id" text PRIMARY KEY,
        "seat_quota" integer CHECK ("seat_quota" >= 0),
        "created_at" timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE "sponsorship"."seats" (
        "sponsorship_id" text COLLATE "C" PRIMARY KEY,
        "client_id" text NOT NULL,
        "email" text NOT NULL CHECK ("email" = lower(btrim("email"))),
        "external_ref" text,
        "status" text NOT NULL CHECK ("status" IN ('invited', 'active', 'ended', 'cancelled')),
        "user_id" text, "crew_name" text,
        "invited_at" timestamptz NOT NULL, "activated_at" timestamptz,
        "expires_at" timestamptz NOT NULL, "closed_at" timestamptz,
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        CHECK (("status" = 'active') <= ("user_id" IS NOT NULL AND "activated_at" IS NOT NULL)),
        CHECK (("status" IN ('ended', 'cancelled')) = ("closed_at" IS NOT NULL))
      );
      CREATE UNIQUE INDEX "seats_live_email" ON "sponsorship"."seats" ("client_id", "email")
        WHERE "status" IN ('invited', 'active');
      CREATE UNIQUE INDEX "seats_live_external_ref" ON "sponsorship"."seats" ("client_id", "external_ref")
        WHERE "status" IN ('invited', 'active') AND "external_ref" IS NOT NULL;
      CREATE INDEX "seats_list" ON "sponsorship"."seats"
        ("client_id", "invited_at" DESC, "sponsorship_id" DESC);
      CREATE INDEX "seats_list_by_status" ON "sponsorship"."seats"
        ("client_id", "status", "invited_at" DESC, "sponsorship_id" DESC);
      CREATE INDEX "seats_by_member" ON "sponsorship"."seats" ("client_id", "user_id");
      CREATE INDEX "seats_invited_email" ON "sponsorship"."seats" ("email") WHERE "status" = 'invited';
      CREATE INDEX "seats_live_expiry" ON "sponsorship"."seats" ("expires_at")
        WHERE "status" IN ('invited', 'active');
      CREATE INDEX "seats_by_external_ref" ON "sponsorship"."seats" ("client_id", "external_ref");
      CREATE TABLE "sponsorship"."seat_events" (
        "id" bigserial PRIMARY KEY,
        "sponsorship_id" text COLLATE "C" NOT NULL REFERENCES "sponsorship"."seats" ("sponsorship_id"),
        "from_status" text, "to_status" text NOT NULL, "actor" text NOT NULL, "reason" text NOT NULL,
        "at" timestamptz NOT NULL DEFAULT clock_timestamp()
      );
      CREATE INDEX "seat_events_by_seat" ON "sponsorship"."seat_events" ("sponsorship_id", "id")`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "sponsorship"."seat_events", "sponsorship"."seats", "sponsorship"."sponsors"`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A delivery per (event, partner), with the bytes every attempt sends: a redelivered event adds nothing. */
export class CreateDeliveries1763900000000 implements MigrationInterface {
  name = 'CreateDeliveries1763900000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "webhooks"."deliveries" (
        "delivery_id" text PRIMARY KEY,
        "event_id" text NOT NULL, "event_type" text NOT NULL, "user_id" text NOT NULL,
        "client_id" text NOT NULL, "target_url" text NOT NULL, "body" text NOT NULL,
        "status" text NOT NULL DEFAULT 'pending' CHECK ("status" IN ('pending', 'delivered', 'failed')),
        "attempts" integer NOT NULL DEFAULT 0,
        "first_attempt_at" timestamptz, "next_attempt_at" timestamptz,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "deliveries_event_client" UNIQUE ("event_id", "client_id")
      );
      CREATE INDEX "deliveries_client_status" ON "webhooks"."deliveries"
        ("client_id", "status", "created_at" DESC);
      CREATE TABLE "webhooks"."delivery_attempts" (
        "delivery_id" text NOT NULL REFERENCES "webhooks"."deliveries" ("delivery_id") ON DELETE CASCADE,
        "attempt" integer NOT NULL,
        "started_at" timestamptz NOT NULL, "duration_ms" integer NOT NULL,
        "status_code" integer, "error" text, "next_attempt_at" timestamptz,
        PRIMARY KEY ("delivery_id", "attempt")
      )`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "webhooks"."delivery_attempts", "webhooks"."deliveries"`);
  }
}

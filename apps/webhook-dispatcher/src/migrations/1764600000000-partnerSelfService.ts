import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Partners read their own delivery log and run their endpoint: skipped deliveries (to replay later), why
 * one was given up, response bodies, endpoint health (kept as attempts are recorded), a replay budget.
 */
export class PartnerSelfService1764600000000 implements MigrationInterface {
  name = 'PartnerSelfService1764600000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE "webhooks"."deliveries" DROP CONSTRAINT "deliveries_status_check";
      ALTER TABLE "webhooks"."deliveries" ADD CONSTRAINT "deliveries_status_check"
        CHECK ("status" IN ('pending', 'delivered', 'failed', 'skipped'));
      ALTER TABLE "webhooks"."deliveries" ADD COLUMN "give_up_reason" text
        CHECK ("give_up_reason" IN ('attempts_exhausted', 'gone', 'not_a_recipient'));
      ALTER TABLE "webhooks"."delivery_attempts" ADD COLUMN "response_body" text;
      CREATE INDEX "deliveries_client_newest" ON "webhooks"."deliveries"
        ("client_id", "created_at" DESC, "delivery_id" DESC);
      CREATE TABLE "webhooks"."webhook_endpoints" (
        "client_id" text PRIMARY KEY,
        "status" text NOT NULL DEFAULT 'enabled' CHECK ("status" IN ('enabled', 'disabled')),
        "disabled_at" timestamptz, "disabled_reason" text,
        "last_success_at" timestamptz, "last_failure_at" timestamptz, "failing_since" timestamptz,
        "updated_at" timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE "webhooks"."webhook_replays" (
        "replay_id" bigserial PRIMARY KEY, "client_id" text NOT NULL,
        "replayed_at" timestamptz NOT NULL DEFAULT now(), "replayed_count" integer NOT NULL
      );
      CREATE INDEX "webhook_replays_client_time" ON "webhooks"."webhook_replays"
        ("client_id", "replayed_at")`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "webhooks"."webhook_replays", "webhooks"."webhook_endpoints";
      DROP INDEX "webhooks"."deliveries_client_newest";
      ALTER TABLE "webhooks"."delivery_attempts" DROP COLUMN "response_body";
      ALTER TABLE "webhooks"."deliveries" DROP COLUMN "give_up_reason";
      DELETE FROM "webhooks"."deliveries" WHERE "status" = 'skipped';
      ALTER TABLE "webhooks"."deliveries" DROP CONSTRAINT "deliveries_status_check";
      ALTER TABLE "webhooks"."deliveries" ADD CONSTRAINT "deliveries_status_check"
        CHECK ("status" IN ('pending', 'delivered', 'failed'))`);
  }
}

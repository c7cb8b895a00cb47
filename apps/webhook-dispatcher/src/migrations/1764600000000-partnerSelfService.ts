import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Partners read their own delivery log and run their endpoint (`/v1/partners/webhooks/*`):
 * - `skipped`: a delivery recorded while the partner's endpoint was disabled, never attempted, so
 *   that it can be replayed once the endpoint is back;
 * - why a delivery was given up (`gone`: the receiver answered 410), and the first KiB of each
 *   attempt's response body;
 * - `webhook_endpoints`: each partner endpoint's health and whether it is enabled, kept by the
 *   statement that records attempts (the URL itself stays with auth-server's partners);
 * - `webhook_replays`: the partner's replays, counted against its hourly budget;
 * - the partner's log newest first, as the keyset pagination reads it.
 */
export class PartnerSelfService1764600000000 implements MigrationInterface {
  name = 'PartnerSelfService1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "webhooks"."deliveries" DROP CONSTRAINT "deliveries_status_check"`);
    await q.query(
      `ALTER TABLE "webhooks"."deliveries" ADD CONSTRAINT "deliveries_status_check"
         CHECK ("status" IN ('pending', 'delivered', 'failed', 'skipped'))`,
    );
    await q.query(
      `ALTER TABLE "webhooks"."deliveries" ADD COLUMN "give_up_reason" text
         CHECK ("give_up_reason" IN ('attempts_exhausted', 'gone', 'not_a_recipient'))`,
    );
    await q.query(`ALTER TABLE "webhooks"."delivery_attempts" ADD COLUMN "response_body" text`);
    await q.query(
      `CREATE INDEX "deliveries_client_newest" ON "webhooks"."deliveries"
         ("client_id", "created_at" DESC, "delivery_id" DESC)`,
    );
    await q.query(`
      CREATE TABLE "webhooks"."webhook_endpoints" (
        "client_id" text PRIMARY KEY,
        "status" text NOT NULL DEFAULT 'enabled' CHECK ("status" IN ('enabled', 'disabled')),
        "disabled_at" timestamptz,
        "disabled_reason" text,
        "last_success_at" timestamptz,
        "last_failure_at" timestamptz,
        "failing_since" timestamptz,
        "updated_at" timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE "webhooks"."webhook_replays" (
        "replay_id" bigserial PRIMARY KEY,
        "client_id" text NOT NULL,
        "replayed_at" timestamptz NOT NULL DEFAULT now(),
        "replayed_count" integer NOT NULL
      )`);
    await q.query(
      `CREATE INDEX "webhook_replays_client_time" ON "webhooks"."webhook_replays" ("client_id", "replayed_at")`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "webhooks"."webhook_replays"`);
    await q.query(`DROP TABLE "webhooks"."webhook_endpoints"`);
    await q.query(`DROP INDEX "webhooks"."deliveries_client_newest"`);
    await q.query(`ALTER TABLE "webhooks"."delivery_attempts" DROP COLUMN "response_body"`);
    await q.query(`ALTER TABLE "webhooks"."deliveries" DROP COLUMN "give_up_reason"`);
    await q.query(`DELETE FROM "webhooks"."deliveries" WHERE "status" = 'skipped'`);
    await q.query(`ALTER TABLE "webhooks"."deliveries" DROP CONSTRAINT "deliveries_status_check"`);
    await q.query(
      `ALTER TABLE "webhooks"."deliveries" ADD CONSTRAINT "deliveries_status_check"
         CHECK ("status" IN ('pending', 'delivered', 'failed'))`,
    );
  }
}

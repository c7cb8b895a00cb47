import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One partner cannot hurt another: redeliveries get a budget of their own (`webhook_replays.kind`);
 * hourly endpoint counts (filled here from the last 25 hours) keep an endpoint's health to 25 rows.
 */
export class PartnerFairness1765000000000 implements MigrationInterface {
  name = 'PartnerFairness1765000000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE "webhooks"."webhook_replays" ADD COLUMN "kind" text NOT NULL DEFAULT 'replay'
        CHECK ("kind" IN ('replay', 'redelivery'));
      CREATE TABLE "webhooks"."webhook_endpoint_hours" (
        "client_id" text NOT NULL, "hour" timestamptz NOT NULL,
        "attempts" integer NOT NULL, "successes" integer NOT NULL,
        PRIMARY KEY ("client_id", "hour")
      );
      INSERT INTO "webhooks"."webhook_endpoint_hours" (client_id, hour, attempts, successes)
      SELECT d.client_id, date_trunc('hour', a.started_at), count(*)::int,
             count(*) FILTER (WHERE a.status_code BETWEEN 200 AND 299)::int
        FROM "webhooks"."delivery_attempts" a
        JOIN "webhooks"."deliveries" d ON d.delivery_id = a.delivery_id
       WHERE a.started_at > now() - interval '25 hours'
         AND (a.status_code IS NOT NULL OR a.error IS DISTINCT FROM 'partner no longer receives webhooks')
       GROUP BY 1, 2`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "webhooks"."webhook_endpoint_hours";
      DELETE FROM "webhooks"."webhook_replays" WHERE "kind" <> 'replay';
      ALTER TABLE "webhooks"."webhook_replays" DROP COLUMN "kind"`);
  }
}

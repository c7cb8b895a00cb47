import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One partner cannot hurt another:
 * - `webhook_replays.kind`: redeliveries count against a budget of their own, in the same table
 *   as replays (the rows of the last hour per partner, nothing more);
 * - `webhook_endpoint_hours`: each endpoint's attempts and successes per hour, kept by the
 *   statement that records attempts, so that the endpoint's health reads at most 25 rows instead
 *   of scanning a day of attempts. Filled from the last 24 hours of attempts here.
 */
export class PartnerFairness1765000000000 implements MigrationInterface {
  name = 'PartnerFairness1765000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE "webhooks"."webhook_replays" ADD COLUMN "kind" text NOT NULL DEFAULT 'replay'
         CHECK ("kind" IN ('replay', 'redelivery'))`,
    );
    await q.query(`
      CREATE TABLE "webhooks"."webhook_endpoint_hours" (
        "client_id" text NOT NULL,
        "hour" timestamptz NOT NULL,
        "attempts" integer NOT NULL,
        "successes" integer NOT NULL,
        PRIMARY KEY ("client_id", "hour")
      )`);
    await q.query(`
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
    await q.query(`DROP TABLE "webhooks"."webhook_endpoint_hours"`);
    await q.query(`DELETE FROM "webhooks"."webhook_replays" WHERE "kind" <> 'replay'`);
    await q.query(`ALTER TABLE "webhooks"."webhook_replays" DROP COLUMN "kind"`);
  }
}

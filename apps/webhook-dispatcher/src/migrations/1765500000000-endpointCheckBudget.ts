import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Endpoint tests get an hourly budget of their own: each makes the dispatcher wait on the endpoint. */
export class EndpointCheckBudget1765500000000 implements MigrationInterface {
  name = 'EndpointCheckBudget1765500000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "webhooks"."webhook_replays" DROP CONSTRAINT "webhook_replays_kind_check",
      ADD CONSTRAINT "webhook_replays_kind_check"
        CHECK ("kind" IN ('replay', 'redelivery', 'endpoint_check'))`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM "webhooks"."webhook_replays" WHERE "kind" = 'endpoint_check';
      ALTER TABLE "webhooks"."webhook_replays" DROP CONSTRAINT "webhook_replays_kind_check",
        ADD CONSTRAINT "webhook_replays_kind_check" CHECK ("kind" IN ('replay', 'redelivery'))`);
  }
}

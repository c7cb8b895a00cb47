import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The backlog is the delivery rows themselves: first attempts still to make, per partner, oldest first. */
export class DeliveryBacklog1765400000000 implements MigrationInterface {
  name = 'DeliveryBacklog1765400000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX IF NOT EXISTS "deliveries_backlog" ON "webhooks"."deliveries"
      ("client_id", "created_at") WHERE "status" = 'pending' AND "attempts" = 0`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS "webhooks"."deliveries_backlog"`);
  }
}

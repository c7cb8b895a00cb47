import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Finished deliveries by age, for DeliveryLogPruner (WEBHOOK_LOG_RETENTION_DAYS). */
export class DeliveryLogRetention1764200000002 implements MigrationInterface {
  name = 'DeliveryLogRetention1764200000002';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX IF NOT EXISTS "deliveries_finished_by_age" ON "webhooks"."deliveries"
      ("created_at") WHERE "status" <> 'pending'`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS "webhooks"."deliveries_finished_by_age"`);
  }
}

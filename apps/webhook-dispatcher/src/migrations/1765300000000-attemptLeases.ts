import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Who runs a delivery's next attempt until when (claimAttempt): a second copy waits, never sends again. */
export class AttemptLeases1765300000000 implements MigrationInterface {
  name = 'AttemptLeases1765300000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "webhooks"."deliveries" ADD COLUMN "attempt_lease_until" timestamptz`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "webhooks"."deliveries" DROP COLUMN "attempt_lease_until"`);
  }
}

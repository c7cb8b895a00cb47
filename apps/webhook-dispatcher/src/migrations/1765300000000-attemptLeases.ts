import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Who is running a delivery's next attempt, and until when (deliveries.repository.ts, claimAttempt):
 * a second copy of the same attempt (an event or attempt message handed out again while the first
 * still runs, on this replica or another) waits for the first instead of sending the event again.
 */
export class AttemptLeases1765300000000 implements MigrationInterface {
  name = 'AttemptLeases1765300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "webhooks"."deliveries" ADD COLUMN "attempt_lease_until" timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "webhooks"."deliveries" DROP COLUMN "attempt_lease_until"`);
  }
}

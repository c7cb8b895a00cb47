import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The seat whose premium a membership dropped last: a repeated drop is answered `downgraded` again. */
export class MembershipDroppedSeat1764200000003 implements MigrationInterface {
  name = 'MembershipDroppedSeat1764200000003';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "crew"."memberships" ADD COLUMN "dropped_sponsorship_id" text`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "crew"."memberships" DROP COLUMN "dropped_sponsorship_id"`);
  }
}

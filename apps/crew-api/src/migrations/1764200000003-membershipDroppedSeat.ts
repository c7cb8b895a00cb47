import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A membership remembers the seat whose premium it dropped last, so a drop repeated for that seat
 * (sponsorship-api retrying after its own commit failed) is answered `downgraded` again instead
 * of as "the member was already self-paying".
 */
export class MembershipDroppedSeat1764200000003 implements MigrationInterface {
  name = 'MembershipDroppedSeat1764200000003';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "crew"."memberships" ADD COLUMN "dropped_sponsorship_id" text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "crew"."memberships" DROP COLUMN "dropped_sponsorship_id"`);
  }
}

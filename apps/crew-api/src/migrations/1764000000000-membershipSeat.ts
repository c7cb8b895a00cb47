import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sponsored memberships name the seat that gave them, so a grant repeated for the same seat is a
 * no-op and a drop takes away only what that seat gave (never another partner's sponsorship or
 * premium the member pays for).
 */
export class MembershipSeat1764000000000 implements MigrationInterface {
  name = 'MembershipSeat1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "crew"."memberships" ADD COLUMN "sponsorship_id" text`);
    await q.query(`
      ALTER TABLE "crew"."memberships" ADD CONSTRAINT "memberships_sponsored_has_seat"
        CHECK (("source" = 'sponsored') = ("sponsorship_id" IS NOT NULL AND "sponsor_client_id" IS NOT NULL))
        NOT VALID`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "crew"."memberships" DROP CONSTRAINT "memberships_sponsored_has_seat"`);
    await q.query(`ALTER TABLE "crew"."memberships" DROP COLUMN "sponsorship_id"`);
  }
}

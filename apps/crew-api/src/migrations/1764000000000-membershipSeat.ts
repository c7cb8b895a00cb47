import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A sponsored membership names its seat: a repeated grant is a no-op, a drop takes only what it gave. */
export class MembershipSeat1764000000000 implements MigrationInterface {
  name = 'MembershipSeat1764000000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "crew"."memberships" ADD COLUMN "sponsorship_id" text;
      ALTER TABLE "crew"."memberships" ADD CONSTRAINT "memberships_sponsored_has_seat"
        CHECK (("source" = 'sponsored') = ("sponsorship_id" IS NOT NULL AND "sponsor_client_id" IS NOT NULL))
        NOT VALID`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "crew"."memberships" DROP CONSTRAINT "memberships_sponsored_has_seat";
      ALTER TABLE "crew"."memberships" DROP COLUMN "sponsorship_id"`);
  }
}

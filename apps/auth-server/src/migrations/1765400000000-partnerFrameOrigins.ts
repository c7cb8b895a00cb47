import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Who may frame a partner's portal, registered on its own, not its redirect URIs; none to start with. */
export class PartnerFrameOrigins1765400000000 implements MigrationInterface {
  name = 'PartnerFrameOrigins1765400000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "auth"."partners" ADD COLUMN "frame_origins" text[] NOT NULL DEFAULT '{}'`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "auth"."partners" DROP COLUMN "frame_origins"`);
  }
}

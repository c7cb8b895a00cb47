import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Where a partner's portal may be framed, registered on its own (`partners set-frame-origins`):
 * no longer the origins of its redirect URIs, which say where members are sent back, not who may
 * frame the portal. Every partner starts with none (`frame-ancestors 'none'`).
 */
export class PartnerFrameOrigins1765400000000 implements MigrationInterface {
  name = 'PartnerFrameOrigins1765400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "auth"."partners" ADD COLUMN "frame_origins" text[] NOT NULL DEFAULT '{}'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "auth"."partners" DROP COLUMN "frame_origins"`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Refresh-token reuse detection (RFC 9700 §4.14.2): a rotated pair names the pair that replaced it,
 * so a rotated refresh token presented again within REFRESH_TOKEN_REUSE_GRACE_SECONDS can find the
 * pair issued moments before. The family itself is `code_digest` (every rotation keeps its code's).
 */
export class RefreshTokenSuccessor1764300000000 implements MigrationInterface {
  name = 'RefreshTokenSuccessor1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "auth"."token_pairs" ADD COLUMN IF NOT EXISTS "replaced_by" text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "auth"."token_pairs" DROP COLUMN IF EXISTS "replaced_by"`);
  }
}

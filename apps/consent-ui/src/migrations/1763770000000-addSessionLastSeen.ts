import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The idle timeout of browser sessions: when a session was last used (to a minute). */
export class AddSessionLastSeen1763770000000 implements MigrationInterface {
  name = 'AddSessionLastSeen1763770000000';
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "consent"."sessions" ADD COLUMN "last_seen_at" timestamptz NOT NULL DEFAULT now()`,
    );
  }
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "consent"."sessions" DROP COLUMN "last_seen_at"`);
  }
}

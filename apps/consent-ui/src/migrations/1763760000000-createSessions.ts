import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Browser sessions of consent-ui (sessions/session.entity.ts); the bounded purge walks the expiry index. */
export class CreateSessions1763760000000 implements MigrationInterface {
  name = 'CreateSessions1763760000000';
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "consent"."sessions" (
        "id_digest" text PRIMARY KEY CHECK ("id_digest" ~ '^[0-9a-f]{64}$'),
        "user_id" text NOT NULL, "csrf_secret" text NOT NULL,
        "created_at" timestamptz NOT NULL, "expires_at" timestamptz NOT NULL,
        CHECK ("expires_at" > "created_at")
      );
      CREATE INDEX "sessions_expires_at" ON "consent"."sessions" ("expires_at")`);
  }
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "consent"."sessions"`);
  }
}

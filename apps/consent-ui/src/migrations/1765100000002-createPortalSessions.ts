import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Partner portal sessions, apart from crew members': the SHA-256 of the cookie's id, an hour at most. */
export class CreatePortalSessions1765100000002 implements MigrationInterface {
  name = 'CreatePortalSessions1765100000002';
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "consent"."portal_sessions" (
        "id_digest" text PRIMARY KEY CHECK ("id_digest" ~ '^[0-9a-f]{64}$'),
        "ref" text NOT NULL UNIQUE,
        "client_id" text NOT NULL, "partner_name" text NOT NULL, "sponsorship" boolean NOT NULL,
        "frame_origins" text[] NOT NULL, "csrf_secret" text NOT NULL,
        "created_at" timestamptz NOT NULL, "expires_at" timestamptz NOT NULL,
        CHECK ("expires_at" > "created_at" AND "expires_at" <= "created_at" + interval '1 hour')
      );
      CREATE INDEX "portal_sessions_expires_at" ON "consent"."portal_sessions" ("expires_at")`);
  }
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "consent"."portal_sessions"`);
  }
}

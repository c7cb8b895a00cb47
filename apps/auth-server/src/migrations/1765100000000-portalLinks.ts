import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Single-use partner portal links: only the SHA-256 of the token is kept; `used_at` spends one. */
export class PortalLinks1765100000000 implements MigrationInterface {
  name = 'PortalLinks1765100000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "auth"."portal_links" (
        "token_digest" text PRIMARY KEY CHECK ("token_digest" ~ '^[0-9a-f]{64}$'),
        "client_id" text NOT NULL REFERENCES "auth"."partners" ("client_id") ON DELETE CASCADE,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "expires_at" timestamptz NOT NULL, "used_at" timestamptz,
        CHECK ("expires_at" > "created_at")
      );
      CREATE INDEX "portal_links_expires_at" ON "auth"."portal_links" ("expires_at")`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "auth"."portal_links"`);
  }
}

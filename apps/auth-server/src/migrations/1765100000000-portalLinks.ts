import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Single-use links to the partner portal (portal/portal-links.repository.ts): only the SHA-256 of
 * a link's token is kept, and a link is spent by setting `used_at`.
 */
export class PortalLinks1765100000000 implements MigrationInterface {
  name = 'PortalLinks1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "auth"."portal_links" (
        "token_digest" text PRIMARY KEY CHECK ("token_digest" ~ '^[0-9a-f]{64}$'),
        "client_id" text NOT NULL REFERENCES "auth"."partners" ("client_id") ON DELETE CASCADE,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "expires_at" timestamptz NOT NULL,
        "used_at" timestamptz,
        CHECK ("expires_at" > "created_at")
      )`);
    // The bounded purge of old links walks this index.
    await q.query(`CREATE INDEX "portal_links_expires_at" ON "auth"."portal_links" ("expires_at")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "auth"."portal_links"`);
  }
}

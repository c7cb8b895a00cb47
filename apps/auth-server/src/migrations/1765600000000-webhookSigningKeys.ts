import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Partners' Ed25519 webhook signing keys, the private key sealed. A replaced key signs beside its
 * successor until `expires_at`; one key per partner has none, so of two rotations at once one fails.
 */
export class WebhookSigningKeys1765600000000 implements MigrationInterface {
  name = 'WebhookSigningKeys1765600000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "auth"."webhook_signing_keys" (
        "id" text PRIMARY KEY,
        "client_id" text NOT NULL REFERENCES "auth"."partners" ("client_id") ON DELETE CASCADE,
        "private_key" text NOT NULL, "public_key" text NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT clock_timestamp(), "expires_at" timestamptz
      );
      CREATE INDEX "webhook_signing_keys_client" ON "auth"."webhook_signing_keys" ("client_id", "created_at");
      CREATE UNIQUE INDEX "webhook_signing_keys_newest" ON "auth"."webhook_signing_keys" ("client_id")
        WHERE "expires_at" IS NULL`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "auth"."webhook_signing_keys"`);
  }
}

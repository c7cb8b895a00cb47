import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Partners' Ed25519 webhook signing keys (`partners rotate-signing-key`, the portal): the private
 * key sealed with SecretBox as the webhook secrets are, the public key in the clear. A replaced
 * key gets an `expires_at` and signs beside its successor until then; one key per partner has
 * none (so of two rotations at once, one fails instead of leaving two newest keys).
 */
export class WebhookSigningKeys1765600000000 implements MigrationInterface {
  name = 'WebhookSigningKeys1765600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "auth"."webhook_signing_keys" (
        "id" text PRIMARY KEY,
        "client_id" text NOT NULL REFERENCES "auth"."partners" ("client_id") ON DELETE CASCADE,
        "private_key" text NOT NULL,
        "public_key" text NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT clock_timestamp(),
        "expires_at" timestamptz
      )`);
    await q.query(
      `CREATE INDEX "webhook_signing_keys_client" ON "auth"."webhook_signing_keys" ("client_id", "created_at")`,
    );
    await q.query(
      `CREATE UNIQUE INDEX "webhook_signing_keys_newest" ON "auth"."webhook_signing_keys" ("client_id")
        WHERE "expires_at" IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "auth"."webhook_signing_keys"`);
  }
}

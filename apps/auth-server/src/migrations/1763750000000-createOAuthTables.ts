import { createOutboxTable } from '@svc/platform';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Partners, crew members' credentials, consents, authorization codes and token pairs. Every
 * credential is stored as a SHA-256 digest (client secrets, codes, tokens) or a scrypt hash
 * (passwords); webhook signing secrets, which must be usable for HMAC, are sealed (AES-256-GCM).
 */
export class CreateOAuthTables1763750000000 implements MigrationInterface {
  name = 'CreateOAuthTables1763750000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "auth"."partners" (
        "client_id" text PRIMARY KEY,
        "secret_digest" text NOT NULL,
        "name" text NOT NULL,
        "redirect_uris" text[] NOT NULL,
        "allowed_scopes" text[] NOT NULL,
        "webhook_url" text,
        "webhook_secret_current" text,
        "webhook_secret_next" text,
        "sponsorship" boolean NOT NULL DEFAULT false,
        "member_left" boolean NOT NULL DEFAULT false,
        "suspended" boolean NOT NULL DEFAULT false,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE "auth"."users" (
        "user_id" text PRIMARY KEY,
        "email" text NOT NULL UNIQUE,
        "password_hash" text NOT NULL,
        "name" text NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE "auth"."consents" (
        "id" bigserial PRIMARY KEY,
        "user_id" text NOT NULL REFERENCES "auth"."users" ("user_id"),
        "client_id" text NOT NULL REFERENCES "auth"."partners" ("client_id"),
        "scopes" text[] NOT NULL,
        "connected_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        "revoked_at" timestamptz
      )`);
    await q.query(
      `CREATE UNIQUE INDEX "consents_one_active" ON "auth"."consents" ("user_id", "client_id") WHERE "revoked_at" IS NULL`,
    );
    await q.query(`
      CREATE TABLE "auth"."authorization_codes" (
        "code_digest" text PRIMARY KEY,
        "client_id" text NOT NULL REFERENCES "auth"."partners" ("client_id"),
        "user_id" text NOT NULL REFERENCES "auth"."users" ("user_id"),
        "redirect_uri" text NOT NULL,
        "scopes" text[] NOT NULL,
        "code_challenge" text NOT NULL,
        "expires_at" timestamptz NOT NULL,
        "consumed_at" timestamptz,
        "created_at" timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX "authorization_codes_expiry" ON "auth"."authorization_codes" ("expires_at")`);
    await q.query(`
      CREATE TABLE "auth"."token_pairs" (
        "id" text PRIMARY KEY,
        "code_digest" text NOT NULL,
        "user_id" text NOT NULL REFERENCES "auth"."users" ("user_id"),
        "client_id" text NOT NULL REFERENCES "auth"."partners" ("client_id"),
        "scopes" text[] NOT NULL,
        "access_digest" text NOT NULL UNIQUE,
        "refresh_digest" text NOT NULL UNIQUE,
        "access_expires_at" timestamptz NOT NULL,
        "refresh_expires_at" timestamptz NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "revoked_at" timestamptz,
        "revoked_reason" text
      )`);
    await q.query(
      `CREATE INDEX "token_pairs_live_by_member" ON "auth"."token_pairs" ("user_id", "client_id") WHERE "revoked_at" IS NULL`,
    );
    await q.query(`CREATE INDEX "token_pairs_by_code" ON "auth"."token_pairs" ("code_digest")`);
    await q.query(
      `CREATE INDEX "token_pairs_live_by_client" ON "auth"."token_pairs" ("client_id") WHERE "revoked_at" IS NULL`,
    );
    await createOutboxTable(q, 'auth');
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'outbox_messages',
      'token_pairs',
      'authorization_codes',
      'consents',
      'users',
      'partners',
    ]) {
      await q.query(`DROP TABLE "auth"."${table}"`);
    }
  }
}

import { addOutboxTraceContext, createOutboxRetentionIndex, createOutboxTable } from '@svc/platform';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * auth-server's tables (the grant functions are tokens/token-grants.sql, migration
 * 1765610000000-tokenGrants). Credentials only as SHA-256 digests or scrypt hashes; webhook secrets
 * sealed. token_pairs: no index names `revoked_at` and fillfactor 50, so marking a pair rotated is a
 * HOT update; no foreign keys, as a pair is inserted only under its member's consent row FOR SHARE
 * (docs/architecture.md, "Token endpoint").
 */
export class Baseline1763750000000 implements MigrationInterface {
  name = 'Baseline1763750000000';
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
      );
      CREATE TABLE "auth"."users" (
        "user_id" text PRIMARY KEY,
        "email" text NOT NULL UNIQUE,
        "password_hash" text NOT NULL,
        "name" text NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE "auth"."consents" (
        "id" bigserial PRIMARY KEY,
        "user_id" text NOT NULL REFERENCES "auth"."users" ("user_id"),
        "client_id" text NOT NULL REFERENCES "auth"."partners" ("client_id"),
        "scopes" text[] NOT NULL,
        "connected_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        "revoked_at" timestamptz
      );
      CREATE UNIQUE INDEX "consents_one_active" ON "auth"."consents" ("user_id", "client_id") WHERE "revoked_at" IS NULL;
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
      );
      CREATE INDEX "authorization_codes_expiry" ON "auth"."authorization_codes" ("expires_at");
      CREATE TABLE "auth"."token_families" (
        "code_digest" text PRIMARY KEY,
        "client_id" text NOT NULL,
        "user_id" text NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX "token_families_by_partner_member" ON "auth"."token_families" ("client_id", "user_id");
      CREATE TABLE "auth"."token_pairs" (
        "id" text PRIMARY KEY,
        "code_digest" text NOT NULL,
        "generation" integer NOT NULL,
        "user_id" text NOT NULL,
        "client_id" text NOT NULL,
        "scopes" text[] NOT NULL,
        "access_digest" text NOT NULL UNIQUE,
        "refresh_digest" text NOT NULL UNIQUE,
        "access_expires_at" timestamptz NOT NULL,
        "refresh_expires_at" timestamptz NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "revoked_at" timestamptz,
        "revoked_reason" text,
        "replaced_by" text
      ) WITH (fillfactor = 50);
      CREATE UNIQUE INDEX "token_pairs_family_generation" ON "auth"."token_pairs" ("code_digest", "generation");
      CREATE INDEX "token_pairs_refresh_expiry" ON "auth"."token_pairs" ("refresh_expires_at")`);
    await createOutboxTable(q, 'auth');
    await createOutboxRetentionIndex(q, 'auth');
    await addOutboxTraceContext(q, 'auth');
  }
  async down(q: QueryRunner): Promise<void> {
    // With the grant functions (tokens/token-grants.sql), which reverting TokenGrants leaves in place.
    await q.query(`DROP FUNCTION IF EXISTS "auth"."token_refresh_batch", "auth"."token_refresh",
      "auth"."token_exchange", "auth"."revoke_family", "auth"."client_check"`);
    await q.query(`DROP TABLE "auth"."outbox_messages", "auth"."token_pairs", "auth"."token_families",
      "auth"."authorization_codes", "auth"."consents", "auth"."users", "auth"."partners"`);
  }
}

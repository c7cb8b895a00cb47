import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The refresh grant's hot path in one statement (docs/architecture.md, "Token endpoint"): it checks
 * the client (secret digest, not suspended), finds the presented pair, takes its family lock, reads
 * it again under the lock, narrows the scope, takes the consent row FOR SHARE, inserts the new pair
 * and marks the old one rotated, in the lock order of the rest of auth-server (family, consent row,
 * token pairs). It runs inside the caller's transaction, so the caller can write the old access
 * token's tombstone before COMMIT. Outcomes:
 *   rotated       the new pair is in; out_scopes are its scopes, ended_access_digest the old access token
 *   client        no active partner with that secret: the caller authenticates again from the table
 *   unusable      unknown, another client's, expired, or revoked while this request waited for the lock
 *   revoked       already revoked when read: a race, a retry or reuse, which TokensService decides
 *   scope         the scope does not narrow the grant; out_scopes are the granted ones
 *   disconnected  the member's consent is gone
 * Each statement of a plpgsql function sees what committed before it (READ COMMITTED), as the
 * statements the service sent one by one did.
 */
export class TokenRefreshFunction1764500000000 implements MigrationInterface {
  name = 'TokenRefreshFunction1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION "auth"."token_refresh"(
        p_refresh_digest text,
        p_client_id text,
        p_secret_digest text,
        p_scopes text[],
        p_pair_id text,
        p_access_digest text,
        p_new_refresh_digest text,
        p_access_expires_at timestamptz,
        p_refresh_expires_at timestamptz,
        p_at timestamptz
      )
      RETURNS TABLE (outcome text, out_user_id text, out_scopes text[], ended_access_digest text)
      LANGUAGE plpgsql
      SET search_path = auth, pg_temp
      AS $fn$
      DECLARE
        seen record;
        pair record;
        issued text[];
      BEGIN
        PERFORM 1 FROM partners p
          WHERE p.client_id = p_client_id AND p.secret_digest = p_secret_digest AND NOT p.suspended;
        IF NOT FOUND THEN
          RETURN QUERY SELECT 'client'::text, NULL::text, NULL::text[], NULL::text;
          RETURN;
        END IF;

        SELECT t.id, t.code_digest, t.client_id, t.revoked_at INTO seen
          FROM token_pairs t WHERE t.refresh_digest = p_refresh_digest;
        IF NOT FOUND OR seen.client_id <> p_client_id THEN
          RETURN QUERY SELECT 'unusable'::text, NULL::text, NULL::text[], NULL::text;
          RETURN;
        END IF;
        IF seen.revoked_at IS NOT NULL THEN
          RETURN QUERY SELECT 'revoked'::text, NULL::text, NULL::text[], NULL::text;
          RETURN;
        END IF;

        PERFORM pg_advisory_xact_lock(hashtextextended('token_family:' || seen.code_digest, 0));
        SELECT t.user_id, t.scopes, t.access_digest, t.refresh_expires_at, t.revoked_at INTO pair
          FROM token_pairs t WHERE t.id = seen.id;
        IF pair.revoked_at IS NOT NULL OR pair.refresh_expires_at <= p_at THEN
          RETURN QUERY SELECT 'unusable'::text, NULL::text, NULL::text[], NULL::text;
          RETURN;
        END IF;

        IF p_scopes IS NOT NULL AND (cardinality(p_scopes) = 0 OR NOT p_scopes <@ pair.scopes) THEN
          RETURN QUERY SELECT 'scope'::text, NULL::text, pair.scopes, NULL::text;
          RETURN;
        END IF;
        issued := coalesce(p_scopes, pair.scopes);

        PERFORM 1 FROM consents c
          WHERE c.user_id = pair.user_id AND c.client_id = p_client_id AND c.revoked_at IS NULL
          FOR SHARE;
        IF NOT FOUND THEN
          RETURN QUERY SELECT 'disconnected'::text, NULL::text, NULL::text[], NULL::text;
          RETURN;
        END IF;

        INSERT INTO token_pairs (id, code_digest, user_id, client_id, scopes, access_digest, refresh_digest,
                                 access_expires_at, refresh_expires_at)
          VALUES (p_pair_id, seen.code_digest, pair.user_id, p_client_id, issued, p_access_digest,
                  p_new_refresh_digest, p_access_expires_at, p_refresh_expires_at);
        UPDATE token_pairs SET revoked_at = p_at, revoked_reason = 'rotated', replaced_by = p_pair_id
          WHERE id = seen.id;
        RETURN QUERY SELECT 'rotated'::text, pair.user_id, issued, pair.access_digest;
      END
      $fn$
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `DROP FUNCTION IF EXISTS "auth"."token_refresh"(text, text, text, text[], text, text, text, timestamptz, timestamptz, timestamptz)`,
    );
  }
}

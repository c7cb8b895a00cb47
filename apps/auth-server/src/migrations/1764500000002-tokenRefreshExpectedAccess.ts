import type { MigrationInterface, QueryRunner } from 'typeorm';
import { TokenRefreshFunction1764500000000 } from './1764500000000-tokenRefreshFunction';

/**
 * token_refresh learns the access token the caller expects the pair to have (derived from the
 * refresh token, tokens/access-token-derivation.ts), which the caller tombstoned before calling:
 * then the function can run on its own, in autocommit, one round trip, and the tombstone still
 * landed before the commit. A pair whose access token is another (minted before the derivation,
 * or under an earlier SECRETS_ENCRYPTION_KEY) answers `unexpected` and changes nothing; the caller
 * then takes the transaction whose tombstone comes from the row. NULL skips the check.
 */
export class TokenRefreshExpectedAccess1764500000002 implements MigrationInterface {
  name = 'TokenRefreshExpectedAccess1764500000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION "auth"."token_refresh"(${OLD_SIGNATURE})`);
    await q.query(tokenRefreshWithExpectedAccess('CREATE'));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION IF EXISTS "auth"."token_refresh"(${OLD_SIGNATURE}, text)`);
    await new TokenRefreshFunction1764500000000().up(q);
  }
}

const OLD_SIGNATURE = 'text, text, text, text[], text, text, text, timestamptz, timestamptz, timestamptz';

/** This migration's token_refresh; a later migration's `down` restores it with CREATE OR REPLACE. */
export const tokenRefreshWithExpectedAccess = (verb: 'CREATE' | 'CREATE OR REPLACE'): string => `
      ${verb} FUNCTION "auth"."token_refresh"(
        p_refresh_digest text,
        p_client_id text,
        p_secret_digest text,
        p_scopes text[],
        p_pair_id text,
        p_access_digest text,
        p_new_refresh_digest text,
        p_access_expires_at timestamptz,
        p_refresh_expires_at timestamptz,
        p_at timestamptz,
        p_expected_access_digest text
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

        IF p_expected_access_digest IS NOT NULL AND pair.access_digest <> p_expected_access_digest THEN
          RETURN QUERY SELECT 'unexpected'::text, NULL::text, NULL::text[], NULL::text;
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
`;

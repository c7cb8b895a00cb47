import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The authorization_code grant (RFC 6749 §4.1.3, RFC 7636 §4.6) in one statement, beside
 * token_refresh: it checks the client (secret digest, not suspended), locks the code and consumes
 * it whatever the outcome (so it cannot be guessed at), checks expiry, client, redirect_uri and the
 * PKCE challenge, takes the consent row FOR SHARE and inserts the first pair of the family. A
 * failure returns its outcome instead of raising, so the consumption commits with it. Outcomes:
 *   issued        the pair is in; out_scopes are its scopes
 *   client        no active partner with that secret: the caller authenticates again from the table
 *   unknown       no such code
 *   replayed      consumed before: the caller revokes what it issued (RFC 9700 §4.5) under the family lock
 *   expired | other_client | redirect_uri | pkce | disconnected
 */
export class TokenExchangeFunction1764500000001 implements MigrationInterface {
  name = 'TokenExchangeFunction1764500000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(tokenExchange('CREATE'));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `DROP FUNCTION IF EXISTS "auth"."token_exchange"(text, text, text, text, text, text, text, text, timestamptz, timestamptz, timestamptz)`,
    );
  }
}

/** This migration's token_exchange; a later migration's `down` restores it with CREATE OR REPLACE. */
export const tokenExchange = (verb: 'CREATE' | 'CREATE OR REPLACE'): string => `
      ${verb} FUNCTION "auth"."token_exchange"(
        p_code_digest text,
        p_client_id text,
        p_secret_digest text,
        p_redirect_uri text,
        p_code_challenge text,
        p_pair_id text,
        p_access_digest text,
        p_refresh_digest text,
        p_access_expires_at timestamptz,
        p_refresh_expires_at timestamptz,
        p_at timestamptz
      )
      RETURNS TABLE (outcome text, out_scopes text[])
      LANGUAGE plpgsql
      SET search_path = auth, pg_temp
      AS $fn$
      DECLARE
        code record;
      BEGIN
        PERFORM 1 FROM partners p
          WHERE p.client_id = p_client_id AND p.secret_digest = p_secret_digest AND NOT p.suspended;
        IF NOT FOUND THEN
          RETURN QUERY SELECT 'client'::text, NULL::text[];
          RETURN;
        END IF;

        SELECT c.client_id, c.user_id, c.redirect_uri, c.scopes, c.code_challenge, c.expires_at, c.consumed_at
          INTO code
          FROM authorization_codes c WHERE c.code_digest = p_code_digest FOR UPDATE;
        IF NOT FOUND THEN
          RETURN QUERY SELECT 'unknown'::text, NULL::text[];
          RETURN;
        END IF;
        IF code.consumed_at IS NOT NULL THEN
          RETURN QUERY SELECT 'replayed'::text, NULL::text[];
          RETURN;
        END IF;
        UPDATE authorization_codes SET consumed_at = now() WHERE code_digest = p_code_digest;

        IF code.expires_at <= p_at THEN
          RETURN QUERY SELECT 'expired'::text, NULL::text[];
        ELSIF code.client_id <> p_client_id THEN
          RETURN QUERY SELECT 'other_client'::text, NULL::text[];
        ELSIF code.redirect_uri <> p_redirect_uri THEN
          RETURN QUERY SELECT 'redirect_uri'::text, NULL::text[];
        ELSIF code.code_challenge <> p_code_challenge THEN
          RETURN QUERY SELECT 'pkce'::text, NULL::text[];
        ELSE
          PERFORM 1 FROM consents c
            WHERE c.user_id = code.user_id AND c.client_id = p_client_id AND c.revoked_at IS NULL
            FOR SHARE;
          IF NOT FOUND THEN
            RETURN QUERY SELECT 'disconnected'::text, NULL::text[];
          ELSE
            INSERT INTO token_pairs (id, code_digest, user_id, client_id, scopes, access_digest, refresh_digest,
                                     access_expires_at, refresh_expires_at)
              VALUES (p_pair_id, p_code_digest, code.user_id, p_client_id, code.scopes, p_access_digest,
                      p_refresh_digest, p_access_expires_at, p_refresh_expires_at);
            RETURN QUERY SELECT 'issued'::text, code.scopes;
          END IF;
        END IF;
      END
      $fn$
`;

import type { MigrationInterface, QueryRunner } from 'typeorm';
import { tokenExchange } from './1764500000001-tokenExchangeFunction';
import { tokenRefreshWithExpectedAccess } from './1764500000002-tokenRefreshExpectedAccess';

/**
 * token_refresh as this migration made it. `liveCheck` is how its rotating UPDATE tests that the
 * pair is live, and `settings` any SET clauses after search_path: migration 1765200000000 makes it
 * again with another `liveCheck`, and with the setting of 1765000000000 that a CREATE OR REPLACE
 * would otherwise drop. `generations` (migration 1765300000000) numbers the new pair one after the
 * pair it replaces.
 */
export function tokenRefreshInOneUpdate(liveCheck: string, settings = '', generations = false): string {
  return `
      CREATE OR REPLACE FUNCTION "auth"."token_refresh"(
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
      SET search_path = auth, pg_temp${settings}
      AS $fn$
      DECLARE
        seen record;
        pair record;
      BEGIN
        SELECT ok.client_ok, t.id, t.code_digest, t.client_id, t.revoked_at${generations ? ', t.generation' : ''} INTO seen
          FROM (SELECT EXISTS (
                  SELECT 1 FROM partners p
                    WHERE p.client_id = p_client_id AND p.secret_digest = p_secret_digest AND NOT p.suspended
                ) AS client_ok) ok
          LEFT JOIN token_pairs t ON t.refresh_digest = p_refresh_digest;
        IF NOT seen.client_ok THEN
          outcome := 'client';
          RETURN NEXT;
          RETURN;
        END IF;
        IF seen.id IS NULL OR seen.client_id <> p_client_id THEN
          outcome := 'unusable';
          RETURN NEXT;
          RETURN;
        END IF;
        IF seen.revoked_at IS NOT NULL THEN
          outcome := 'revoked';
          RETURN NEXT;
          RETURN;
        END IF;

        PERFORM pg_advisory_xact_lock(hashtextextended('token_family:' || seen.code_digest, 0));
        UPDATE token_pairs t SET revoked_at = p_at, revoked_reason = 'rotated', replaced_by = p_pair_id
          WHERE t.id = seen.id
            AND ${liveCheck} AND t.refresh_expires_at > p_at
            AND (p_expected_access_digest IS NULL OR t.access_digest = p_expected_access_digest)
            AND (p_scopes IS NULL OR (cardinality(p_scopes) > 0 AND p_scopes <@ t.scopes))
            AND EXISTS (
              SELECT 1 FROM consents c
                WHERE c.user_id = t.user_id AND c.client_id = p_client_id AND c.revoked_at IS NULL
                FOR SHARE)
          RETURNING t.user_id, t.scopes, t.access_digest INTO pair;
        IF NOT FOUND THEN
          -- Nothing changed: say why, in the order the checks have always been made.
          SELECT t.scopes, t.access_digest, t.refresh_expires_at, t.revoked_at INTO pair
            FROM token_pairs t WHERE t.id = seen.id;
          IF pair.revoked_at IS NOT NULL OR pair.refresh_expires_at <= p_at THEN
            outcome := 'unusable';
          ELSIF p_expected_access_digest IS NOT NULL AND pair.access_digest <> p_expected_access_digest THEN
            outcome := 'unexpected';
          ELSIF p_scopes IS NOT NULL AND (cardinality(p_scopes) = 0 OR NOT p_scopes <@ pair.scopes) THEN
            outcome := 'scope';
            out_scopes := pair.scopes;
          ELSE
            outcome := 'disconnected';
          END IF;
          RETURN NEXT;
          RETURN;
        END IF;

        out_scopes := coalesce(p_scopes, pair.scopes);
        INSERT INTO token_pairs (id, code_digest, user_id, client_id, scopes, access_digest, refresh_digest,
                                 access_expires_at, refresh_expires_at${generations ? ', generation' : ''})
          VALUES (p_pair_id, seen.code_digest, pair.user_id, p_client_id, out_scopes, p_access_digest,
                  p_new_refresh_digest, p_access_expires_at, p_refresh_expires_at${generations ? ', seen.generation + 1' : ''});
        outcome := 'rotated';
        out_user_id := pair.user_id;
        ended_access_digest := pair.access_digest;
        RETURN NEXT;
      END
      $fn$
    `;
}

/**
 * token_exchange as this migration made it; `settings` as for token_refresh above. `families`
 * (migration 1765300000000) records the new family of pairs that the code starts, its pair first.
 */
export function tokenExchangeInOneUpdate(settings = '', families = false): string {
  return `
      CREATE OR REPLACE FUNCTION "auth"."token_exchange"(
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
      SET search_path = auth, pg_temp${settings}
      AS $fn$
      DECLARE
        code record;
      BEGIN
        UPDATE authorization_codes c SET consumed_at = now()
          WHERE c.code_digest = p_code_digest AND c.consumed_at IS NULL
            AND EXISTS (
              SELECT 1 FROM partners p
                WHERE p.client_id = p_client_id AND p.secret_digest = p_secret_digest AND NOT p.suspended)
          RETURNING c.client_id, c.user_id, c.redirect_uri, c.scopes, c.code_challenge, c.expires_at INTO code;
        IF NOT FOUND THEN
          -- Nothing consumed: the client, then the code, say why.
          PERFORM 1 FROM partners p
            WHERE p.client_id = p_client_id AND p.secret_digest = p_secret_digest AND NOT p.suspended;
          IF NOT FOUND THEN
            outcome := 'client';
          ELSE
            PERFORM 1 FROM authorization_codes c WHERE c.code_digest = p_code_digest;
            outcome := CASE WHEN FOUND THEN 'replayed' ELSE 'unknown' END;
          END IF;
          RETURN NEXT;
          RETURN;
        END IF;

        IF code.expires_at <= p_at THEN
          outcome := 'expired';
        ELSIF code.client_id <> p_client_id THEN
          outcome := 'other_client';
        ELSIF code.redirect_uri <> p_redirect_uri THEN
          outcome := 'redirect_uri';
        ELSIF code.code_challenge <> p_code_challenge THEN
          outcome := 'pkce';
        ELSE
          INSERT INTO token_pairs (id, code_digest, user_id, client_id, scopes, access_digest, refresh_digest,
                                   access_expires_at, refresh_expires_at${families ? ', generation' : ''})
            SELECT p_pair_id, p_code_digest, code.user_id, p_client_id, code.scopes, p_access_digest,
                   p_refresh_digest, p_access_expires_at, p_refresh_expires_at${families ? ', 0' : ''}
              FROM consents c
              WHERE c.user_id = code.user_id AND c.client_id = p_client_id AND c.revoked_at IS NULL
              FOR SHARE OF c;
          IF FOUND THEN${
            families
              ? `
            INSERT INTO token_families (code_digest, client_id, user_id)
              VALUES (p_code_digest, p_client_id, code.user_id);`
              : ''
          }
            outcome := 'issued';
            out_scopes := code.scopes;
          ELSE
            outcome := 'disconnected';
          END IF;
        END IF;
        RETURN NEXT;
      END
      $fn$
    `;
}

/**
 * The two grants with fewer statements inside PostgreSQL (docs/architecture.md, "Token endpoint"):
 * every statement a plpgsql function runs starts and ends an executor, and in a profile of the
 * backends that was a fifth of a refresh. Same arguments, same outcomes, same lock order (family,
 * consent row, token pairs) as the functions they replace:
 *
 * - token_refresh reads the client and the presented pair in one statement, takes the family lock,
 *   then rotates with one UPDATE whose WHERE holds every check (live, not expired, the expected
 *   access token, a narrowing scope, the consent row taken FOR SHARE), and inserts the new pair.
 *   Only when that UPDATE matches nothing does it read the pair again, to say why.
 * - token_exchange consumes the code with one UPDATE that also checks the client, and reads the
 *   code again only when nothing was consumed, to say why (unknown, replayed, or the client).
 * - Outcomes are returned by RETURN NEXT, not by one more SELECT.
 *
 * token_pairs loses its foreign keys to users and partners. Both grants insert a pair only after
 * taking the member's live consent row FOR SHARE in the same transaction, and that row holds the
 * same two foreign keys; neither users nor partners are ever deleted. The keys checked again, per
 * insert, what the consent row already guarantees (two trigger queries per grant).
 */
export class TokenGrantsFewerStatements1764700000000 implements MigrationInterface {
  name = 'TokenGrantsFewerStatements1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "auth"."token_pairs" DROP CONSTRAINT IF EXISTS "token_pairs_user_id_fkey"`);
    await q.query(`ALTER TABLE "auth"."token_pairs" DROP CONSTRAINT IF EXISTS "token_pairs_client_id_fkey"`);
    await q.query(tokenRefreshInOneUpdate('t.revoked_at IS NULL'));
    await q.query(tokenExchangeInOneUpdate());
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(tokenExchange('CREATE OR REPLACE'));
    await q.query(tokenRefreshWithExpectedAccess('CREATE OR REPLACE'));
    await q.query(
      `ALTER TABLE "auth"."token_pairs" ADD CONSTRAINT "token_pairs_user_id_fkey"
         FOREIGN KEY ("user_id") REFERENCES "auth"."users" ("user_id")`,
    );
    await q.query(
      `ALTER TABLE "auth"."token_pairs" ADD CONSTRAINT "token_pairs_client_id_fkey"
         FOREIGN KEY ("client_id") REFERENCES "auth"."partners" ("client_id")`,
    );
  }
}

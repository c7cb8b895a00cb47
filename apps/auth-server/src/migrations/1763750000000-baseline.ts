import { addOutboxTraceContext, createOutboxRetentionIndex, createOutboxTable } from '@svc/platform';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * auth-server's schema: partners, crew members' credentials, consents, authorization codes, token
 * pairs and their families, the outbox, and the two grant functions of the token endpoint. Every
 * credential is stored as a SHA-256 digest (client secrets, codes, tokens) or a scrypt hash
 * (passwords); webhook signing secrets, which must be usable for HMAC, are sealed (AES-256-GCM).
 *
 * Token pairs and families (docs/architecture.md, "Token endpoint"):
 * - a family is the pairs of one authorization code (`token_families`, one row per code that
 *   issued tokens, with its member and partner); `generation` numbers its pairs, 0 for the code's.
 *   Only the newest pair of a family can be live: every rotation, re-issue and revocation ends
 *   the newest pair in the transaction that adds the next, under the family lock. So a family's
 *   live pair is one probe of (code_digest, generation) away, however often it was rotated, and
 *   disconnects and suspensions find a member's or partner's live pairs through their families.
 * - no index names `revoked_at`, and the table keeps room on each page (fillfactor 50): marking
 *   a pair rotated is then a HOT update that writes no index entry.
 * - no foreign keys to users and partners: a pair is only inserted after its member's live consent
 *   row, which holds both keys, was taken FOR SHARE in the same transaction.
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
      CREATE TABLE "auth"."token_families" (
        "code_digest" text PRIMARY KEY,
        "client_id" text NOT NULL,
        "user_id" text NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE INDEX "token_families_by_partner_member" ON "auth"."token_families" ("client_id", "user_id")`,
    );
    await q.query(`
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
      ) WITH (fillfactor = 50)`);
    await q.query(
      `CREATE UNIQUE INDEX "token_pairs_family_generation" ON "auth"."token_pairs" ("code_digest", "generation")`,
    );
    await q.query(`CREATE INDEX "token_pairs_refresh_expiry" ON "auth"."token_pairs" ("refresh_expires_at")`);
    await createOutboxTable(q, 'auth');
    await createOutboxRetentionIndex(q, 'auth');
    await addOutboxTraceContext(q, 'auth');
    await q.query(REVOKE_FAMILY);
    await q.query(TOKEN_EXCHANGE);
    await q.query(TOKEN_REFRESH);
    await q.query(TOKEN_REFRESH_BATCH);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION "auth"."token_refresh_batch"`);
    await q.query(`DROP FUNCTION "auth"."token_refresh"`);
    await q.query(`DROP FUNCTION "auth"."token_exchange"`);
    await q.query(`DROP FUNCTION "auth"."revoke_family"`);
    for (const table of [
      'outbox_messages',
      'token_pairs',
      'token_families',
      'authorization_codes',
      'consents',
      'users',
      'partners',
    ]) {
      await q.query(`DROP TABLE "auth"."${table}"`);
    }
  }
}

/**
 * The locks every grant takes, in this order: the partner's (shared; a suspension takes it
 * exclusively, so a grant in flight commits before the suspension revokes, and a grant after it
 * sees the partner suspended), the family's, then the member's consent row FOR SHARE (a
 * disconnect updates it, with the same effect), then token pairs.
 */
const PARTNER_CHECK = `
        PERFORM pg_advisory_xact_lock_shared(hashtextextended('partner:' || p_client_id, 0));
        PERFORM 1 FROM partners p
          WHERE p.client_id = p_client_id AND p.secret_digest = p_secret_digest AND NOT p.suspended;
        IF NOT FOUND THEN
          outcome := 'client';
          RETURN NEXT;
          RETURN;
        END IF;`;

/**
 * Revokes a family (the pairs of one code) for `p_reason` and returns the access digests it ended,
 * for the caller to tombstone before COMMIT. Only the family's newest pair can be live, so this is
 * one index probe and at most one row, however long the family's history; a family already revoked
 * costs the probe and returns nothing. The caller holds the family lock.
 */
const REVOKE_FAMILY = `
      CREATE FUNCTION "auth"."revoke_family"(p_code_digest text, p_reason text)
      RETURNS text[]
      LANGUAGE sql
      SET search_path = auth, pg_temp
      AS $fn$
        WITH ended AS (
          UPDATE token_pairs t SET revoked_at = now(), revoked_reason = p_reason
           WHERE t.id = (SELECT n.id FROM token_pairs n WHERE n.code_digest = p_code_digest
                          ORDER BY n.generation DESC LIMIT 1)
             AND t.revoked_at IS NULL
          RETURNING t.access_digest
        )
        SELECT coalesce(array_agg(access_digest), '{}') FROM ended
      $fn$`;

/**
 * The authorization_code grant (RFC 6749 §4.1.3, RFC 7636 §4.6). It consumes the code whatever
 * the outcome (so it cannot be guessed at) and returns the outcome instead of raising, so the
 * consumption commits with it. A code used before is a replay (RFC 9700 §4.5): the family's live
 * pair, if any, is revoked and its access digest returned in `ended`, for the caller to tombstone
 * before COMMIT. With `p_may_revoke` false (autocommit, nothing tombstoned) a replay that would
 * revoke a live pair changes nothing and answers `transaction`: the caller calls again inside a
 * transaction. Outcomes: issued | client | unknown | replayed | expired | other_client |
 * redirect_uri | pkce | disconnected | transaction.
 */
const TOKEN_EXCHANGE = `
      CREATE FUNCTION "auth"."token_exchange"(
        p_code_digest text,
        p_client_id text,
        p_secret_digest text,
        p_redirect_uri text,
        p_code_challenge text,
        p_may_revoke boolean,
        p_pair_id text,
        p_access_digest text,
        p_refresh_digest text,
        p_access_expires_at timestamptz,
        p_refresh_expires_at timestamptz
      )
      RETURNS TABLE (outcome text, out_scopes text[], out_client_id text, ended text[])
      LANGUAGE plpgsql
      SET search_path = auth, pg_temp
      AS $fn$
      DECLARE
        code record;
      BEGIN${PARTNER_CHECK}

        UPDATE authorization_codes c SET consumed_at = now()
          WHERE c.code_digest = p_code_digest AND c.consumed_at IS NULL
          RETURNING c.client_id, c.user_id, c.redirect_uri, c.scopes, c.code_challenge, c.expires_at INTO code;
        IF NOT FOUND THEN
          SELECT c.client_id INTO code FROM authorization_codes c WHERE c.code_digest = p_code_digest;
          IF NOT FOUND THEN
            outcome := 'unknown';
            RETURN NEXT;
            RETURN;
          END IF;
          PERFORM pg_advisory_xact_lock(hashtextextended('token_family:' || p_code_digest, 0));
          IF NOT p_may_revoke AND EXISTS (
            SELECT 1 FROM token_pairs t WHERE t.code_digest = p_code_digest AND t.revoked_at IS NULL
          ) THEN
            outcome := 'transaction';
            RETURN NEXT;
            RETURN;
          END IF;
          outcome := 'replayed';
          out_client_id := code.client_id;
          ended := revoke_family(p_code_digest, 'code_replayed');
          RETURN NEXT;
          RETURN;
        END IF;

        IF code.expires_at <= now() THEN
          outcome := 'expired';
        ELSIF code.client_id <> p_client_id THEN
          outcome := 'other_client';
        ELSIF code.redirect_uri <> p_redirect_uri THEN
          outcome := 'redirect_uri';
        ELSIF code.code_challenge <> p_code_challenge THEN
          outcome := 'pkce';
        ELSE
          PERFORM 1 FROM consents c
            WHERE c.user_id = code.user_id AND c.client_id = p_client_id AND c.revoked_at IS NULL
            FOR SHARE;
          IF FOUND THEN
            INSERT INTO token_families (code_digest, client_id, user_id)
              VALUES (p_code_digest, p_client_id, code.user_id);
            INSERT INTO token_pairs (id, code_digest, generation, user_id, client_id, scopes, access_digest,
                                     refresh_digest, access_expires_at, refresh_expires_at)
              VALUES (p_pair_id, p_code_digest, 0, code.user_id, p_client_id, code.scopes, p_access_digest,
                      p_refresh_digest, p_access_expires_at, p_refresh_expires_at);
            outcome := 'issued';
            out_scopes := code.scopes;
          ELSE
            outcome := 'disconnected';
          END IF;
        END IF;
        RETURN NEXT;
      END
      $fn$`;

/**
 * The refresh_token grant (RFC 6749 §6) with rotation on every use and reuse detection (RFC 9700
 * §4.14.2): every rule of it is here. Under the family lock:
 * - a live, unexpired token: its pair is marked rotated and replaced by a new one (narrowed to
 *   `p_scopes` when given: RFC 6749 §6 allows narrowing, never widening) if the consent holds;
 * - the previous token (its successor unused) presented within `p_race_window_ms` of its rotation,
 *   or a token read live before the lock and rotated after it: a lost race, `raced`; the winner's
 *   pair stays valid;
 * - the previous token later, within `p_grace_seconds` (a lost response): the successor is
 *   superseded and a new pair issued, `reissued`;
 * - any other rotated or superseded token: reuse, `reused`; the family is revoked.
 * Times are PostgreSQL's: a request's arrival is this statement's start less `p_waited_ms`, the
 * time it had spent in auth-server (a duration, so no two replicas' clocks are compared).
 *
 * `ended` holds the access digests that the call ended. In autocommit, `p_tombstoned` is the one
 * the caller tombstoned already (derived from the refresh token); a call that would end any other
 * changes nothing and answers `transaction`, and the caller calls again inside a transaction
 * (`p_tombstoned` NULL) and tombstones `ended` before COMMIT. Outcomes: rotated | reissued |
 * client | unusable | raced | scope (out_scopes: the granted ones) | disconnected | reused |
 * transaction.
 */
const TOKEN_REFRESH = `
      CREATE FUNCTION "auth"."token_refresh"(
        p_refresh_digest text,
        p_client_id text,
        p_secret_digest text,
        p_scopes text[],
        p_tombstoned text,
        p_waited_ms double precision,
        p_race_window_ms integer,
        p_grace_seconds integer,
        p_pair_id text,
        p_access_digest text,
        p_new_refresh_digest text,
        p_access_expires_at timestamptz,
        p_refresh_expires_at timestamptz
      )
      RETURNS TABLE (outcome text, out_user_id text, out_scopes text[], ended text[])
      LANGUAGE plpgsql
      SET search_path = auth, pg_temp
      AS $fn$
      DECLARE
        arrived timestamptz := statement_timestamp() - make_interval(secs => p_waited_ms / 1000);
        seen record;
        pair record;
        successor record;
        -- The newest pair of the family, which the new one replaces: the presented pair, or on a
        -- re-issue its unused successor.
        replaced_id text;
        replaced_generation integer;
        replaced_access text;
      BEGIN
        -- The client and the presented pair in one statement, after the partner's lock (PARTNER_CHECK).
        PERFORM pg_advisory_xact_lock_shared(hashtextextended('partner:' || p_client_id, 0));
        SELECT ok.client_ok, t.id, t.code_digest, t.client_id, t.revoked_at INTO seen
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
        PERFORM pg_advisory_xact_lock(hashtextextended('token_family:' || seen.code_digest, 0));

        -- The common case in one UPDATE that holds every check of a rotation: live, unexpired,
        -- the tombstoned access token, a narrowing within the grant, the consent row FOR SHARE.
        -- Anything else falls through to the rules below, which read the pair again and say why.
        IF seen.revoked_at IS NULL THEN
          UPDATE token_pairs t SET revoked_at = now(), revoked_reason = 'rotated', replaced_by = p_pair_id
           WHERE t.id = seen.id AND t.revoked_at IS NULL AND t.refresh_expires_at > now()
             AND (p_tombstoned IS NULL OR t.access_digest = p_tombstoned)
             AND (p_scopes IS NULL OR (cardinality(p_scopes) > 0 AND p_scopes <@ t.scopes))
             AND EXISTS (
               SELECT 1 FROM consents c
                WHERE c.user_id = t.user_id AND c.client_id = p_client_id AND c.revoked_at IS NULL
                  FOR SHARE)
          RETURNING t.generation, t.user_id, t.scopes, t.access_digest INTO pair;
          IF FOUND THEN
            out_user_id := pair.user_id;
            out_scopes := coalesce(p_scopes, pair.scopes);
            INSERT INTO token_pairs (id, code_digest, generation, user_id, client_id, scopes, access_digest,
                                     refresh_digest, access_expires_at, refresh_expires_at)
              VALUES (p_pair_id, seen.code_digest, pair.generation + 1, pair.user_id, p_client_id, out_scopes,
                      p_access_digest, p_new_refresh_digest, p_access_expires_at, p_refresh_expires_at);
            outcome := 'rotated';
            ended := ARRAY[pair.access_digest];
            RETURN NEXT;
            RETURN;
          END IF;
        END IF;

        SELECT t.id, t.generation, t.user_id, t.scopes, t.access_digest, t.refresh_expires_at,
               t.revoked_at, t.revoked_reason, t.replaced_by
          INTO pair FROM token_pairs t WHERE t.id = seen.id;
        out_user_id := pair.user_id;

        IF pair.revoked_at IS NULL THEN
          IF pair.refresh_expires_at <= now() THEN
            outcome := 'unusable';
          ELSIF p_tombstoned IS NOT NULL AND pair.access_digest <> p_tombstoned THEN
            outcome := 'transaction';
          ELSE
            SELECT pair.id, pair.generation, pair.access_digest
              INTO replaced_id, replaced_generation, replaced_access;
          END IF;
        ELSIF pair.revoked_reason NOT IN ('rotated', 'superseded') THEN
          outcome := 'unusable';
        ELSIF seen.revoked_at IS NULL THEN
          -- Rotated while this call waited for the family lock.
          outcome := 'raced';
        ELSE
          -- Set when the presented token is the immediately previous one: its successor is unused.
          SELECT s.id, s.generation, s.access_digest INTO successor
            FROM token_pairs s
           WHERE s.id = pair.replaced_by AND pair.revoked_reason = 'rotated'
             AND s.revoked_at IS NULL AND s.refresh_expires_at > now();
          IF successor.id IS NULL THEN
            NULL;
          ELSIF arrived < pair.revoked_at + make_interval(secs => p_race_window_ms / 1000.0) THEN
            outcome := 'raced';
          ELSIF p_grace_seconds > 0 AND now() - pair.revoked_at <= make_interval(secs => p_grace_seconds) THEN
            IF p_tombstoned IS NOT NULL THEN
              outcome := 'transaction';
            ELSE
              SELECT successor.id, successor.generation, successor.access_digest
                INTO replaced_id, replaced_generation, replaced_access;
            END IF;
          END IF;
          IF outcome IS NULL AND replaced_id IS NULL THEN
            IF p_tombstoned IS NOT NULL AND EXISTS (
              SELECT 1 FROM token_pairs t WHERE t.code_digest = seen.code_digest AND t.revoked_at IS NULL
            ) THEN
              outcome := 'transaction';
            ELSE
              outcome := 'reused';
              ended := revoke_family(seen.code_digest, 'reuse_detected');
            END IF;
          END IF;
        END IF;
        IF outcome IS NOT NULL THEN
          RETURN NEXT;
          RETURN;
        END IF;

        -- A new pair for the presented token, replacing the family's newest.
        IF p_scopes IS NOT NULL AND (cardinality(p_scopes) = 0 OR NOT p_scopes <@ pair.scopes) THEN
          outcome := 'scope';
          out_scopes := pair.scopes;
          RETURN NEXT;
          RETURN;
        END IF;
        PERFORM 1 FROM consents c
          WHERE c.user_id = pair.user_id AND c.client_id = p_client_id AND c.revoked_at IS NULL
          FOR SHARE;
        IF NOT FOUND THEN
          outcome := 'disconnected';
          RETURN NEXT;
          RETURN;
        END IF;
        IF replaced_id <> pair.id THEN
          UPDATE token_pairs SET revoked_at = now(), revoked_reason = 'superseded' WHERE id = replaced_id;
        END IF;
        UPDATE token_pairs SET revoked_at = now(), revoked_reason = 'rotated', replaced_by = p_pair_id
          WHERE id = pair.id;
        out_scopes := coalesce(p_scopes, pair.scopes);
        INSERT INTO token_pairs (id, code_digest, generation, user_id, client_id, scopes, access_digest,
                                 refresh_digest, access_expires_at, refresh_expires_at)
          VALUES (p_pair_id, seen.code_digest, replaced_generation + 1, pair.user_id, p_client_id, out_scopes,
                  p_access_digest, p_new_refresh_digest, p_access_expires_at, p_refresh_expires_at);
        outcome := CASE WHEN replaced_id = pair.id THEN 'rotated' ELSE 'reissued' END;
        ended := ARRAY[replaced_access];
        RETURN NEXT;
      END
      $fn$`;

/**
 * Group commit of refreshes: `token_refresh` in autocommit for each of several rotations (no
 * narrowing) in order, in one statement and one transaction, so refreshes that arrive while another
 * statement is in flight share its round trip and its commit (measured: PostgreSQL's CPU per
 * refresh at 16 clients about a third of one transaction per refresh). Each answer is the one the
 * rotation would have had alone after the ones before it; the rules are token_refresh's.
 *
 * A batch holds the locks of its done rotations while it does the next; waiting on a lock then
 * could deadlock with another batch or a suspension. It gives way instead: `lock_timeout` ends it
 * after 100 ms of waiting, it rolls back whole, and auth-server sends each rotation alone.
 */
const TOKEN_REFRESH_BATCH = `
      CREATE FUNCTION "auth"."token_refresh_batch"(
        p_refresh_digests text[],
        p_client_ids text[],
        p_secret_digests text[],
        p_tombstoned text[],
        p_waited_ms double precision[],
        p_race_window_ms integer,
        p_grace_seconds integer,
        p_pair_ids text[],
        p_access_digests text[],
        p_new_refresh_digests text[],
        p_access_expires_at timestamptz[],
        p_refresh_expires_at timestamptz[]
      )
      RETURNS TABLE (ord integer, outcome text, out_user_id text, out_scopes text[], ended text[])
      LANGUAGE plpgsql
      SET search_path = auth, pg_temp
      SET lock_timeout = '100ms'
      AS $fn$
      BEGIN
        FOR i IN 1 .. coalesce(cardinality(p_refresh_digests), 0) LOOP
          RETURN QUERY
            SELECT i, r.outcome, r.out_user_id, r.out_scopes, r.ended
              FROM token_refresh(p_refresh_digests[i], p_client_ids[i], p_secret_digests[i], NULL,
                                 p_tombstoned[i], p_waited_ms[i], p_race_window_ms, p_grace_seconds,
                                 p_pair_ids[i], p_access_digests[i], p_new_refresh_digests[i],
                                 p_access_expires_at[i], p_refresh_expires_at[i]) r;
        END LOOP;
      END
      $fn$`;

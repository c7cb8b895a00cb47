-- auth-server's token grants: every rule of the token endpoint's two grants, as SQL functions
-- (docs/architecture.md, "Token endpoint"). This file is their only text: migration
-- 1765610000000-tokenGrants applies it, and a change to it ships in a new migration that applies it
-- again (every statement is CREATE OR REPLACE, so applying it twice changes nothing).
--
-- The locks every grant takes, in this order: the partner's (shared; a suspension takes it
-- exclusively, so a grant in flight commits before the suspension revokes, and a grant after it
-- sees the partner suspended), the family's, then the member's consent row FOR SHARE (a disconnect
-- updates it, with the same effect), then token pairs.

-- Client authentication (RFC 6749 §2.3.1), the one rule of it: NULL when `p_client_id` is a
-- partner whose secret digest is `p_secret_digest` and which is not suspended, otherwise why not
-- ('credentials': unknown client or wrong secret; 'suspended'). Always one row. The grants call it
-- after the partner's lock, in the statement that reads the presented code or token; auth-server's
-- PartnersService reads partners through it. A set-returning SQL function without SET or STRICT,
-- so PostgreSQL inlines it into the calling query (hence the schema-qualified table).
CREATE OR REPLACE FUNCTION "auth"."client_check"(p_client_id text, p_secret_digest text)
RETURNS TABLE (refusal text)
LANGUAGE sql
STABLE
AS $fn$
  SELECT CASE WHEN p.secret_digest IS DISTINCT FROM p_secret_digest THEN 'credentials'
              WHEN p.suspended THEN 'suspended' END
    FROM (VALUES (1)) one LEFT JOIN "auth"."partners" p ON p.client_id = p_client_id
$fn$;

-- Revokes a family (the pairs of one code) for `p_reason` and returns the access digests it ended,
-- for the caller to tombstone before COMMIT. Only the family's newest pair can be live, so this is
-- one index probe and at most one row, however long the family's history; a family already revoked
-- costs the probe and returns nothing. The caller holds the family lock.
CREATE OR REPLACE FUNCTION "auth"."revoke_family"(p_code_digest text, p_reason text)
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
$fn$;

-- The authorization_code grant (RFC 6749 §4.1.3, RFC 7636 §4.6). It consumes the code whatever
-- the outcome (so it cannot be guessed at) and returns the outcome instead of raising, so the
-- consumption commits with it. A code used before is a replay (RFC 9700 §4.5): the family's live
-- pair, if any, is revoked and its access digest returned in `ended`, for the caller to tombstone
-- before COMMIT. With `p_may_revoke` false (autocommit, nothing tombstoned) a replay that would
-- revoke a live pair changes nothing and answers `transaction`: the caller calls again inside a
-- transaction. Outcomes: issued | client | unknown | replayed | expired | other_client |
-- redirect_uri | pkce | disconnected | transaction.
CREATE OR REPLACE FUNCTION "auth"."token_exchange"(
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
BEGIN
  PERFORM pg_advisory_xact_lock_shared(hashtextextended('partner:' || p_client_id, 0));
  IF (SELECT c.refusal FROM client_check(p_client_id, p_secret_digest) c) IS NOT NULL THEN
    outcome := 'client';
    RETURN NEXT;
    RETURN;
  END IF;

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
$fn$;

-- The refresh_token grant (RFC 6749 §6) with rotation on every use and reuse detection (RFC 9700
-- §4.14.2): every rule of it is here. Under the family lock:
-- - a live, unexpired token: its pair is marked rotated and replaced by a new one (narrowed to
--   `p_scopes` when given: RFC 6749 §6 allows narrowing, never widening) if the consent holds;
-- - the previous token (its successor unused) presented within `p_race_window_ms` of its rotation,
--   or a token read live before the lock and rotated after it: a lost race, `raced`; the winner's
--   pair stays valid;
-- - the previous token later, within `p_grace_seconds` (a lost response): the successor is
--   superseded and a new pair issued, `reissued`;
-- - any other rotated or superseded token: reuse, `reused`; the family is revoked.
-- Times are PostgreSQL's: a request's arrival is this statement's start less `p_waited_ms`, the
-- time it had spent in auth-server (a duration, so no two replicas' clocks are compared).
--
-- `ended` holds the access digests that the call ended. In autocommit, `p_tombstoned` is the one
-- the caller tombstoned already (derived from the refresh token); a call that would end any other
-- changes nothing and answers `transaction`, and the caller calls again inside a transaction
-- (`p_tombstoned` NULL) and tombstones `ended` before COMMIT. Outcomes: rotated | reissued |
-- client | unusable | raced | scope (out_scopes: the granted ones) | disconnected | reused |
-- transaction.
CREATE OR REPLACE FUNCTION "auth"."token_refresh"(
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
  -- The client and the presented pair in one statement, after the partner's lock.
  PERFORM pg_advisory_xact_lock_shared(hashtextextended('partner:' || p_client_id, 0));
  SELECT c.refusal, t.id, t.code_digest, t.client_id, t.revoked_at INTO seen
    FROM client_check(p_client_id, p_secret_digest) c
    LEFT JOIN token_pairs t ON t.refresh_digest = p_refresh_digest;
  IF seen.refusal IS NOT NULL THEN
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
$fn$;

-- Group commit of refreshes: `token_refresh` in autocommit for each of several rotations (no
-- narrowing) in order, in one statement and one transaction, so refreshes that arrive while another
-- statement is in flight share its round trip and its commit (measured: PostgreSQL's CPU per
-- refresh at 16 clients about a third of one transaction per refresh). Each answer is the one the
-- rotation would have had alone after the ones before it; the rules are token_refresh's.
--
-- A batch holds the locks of its done rotations while it does the next; waiting on a lock then
-- could deadlock with another batch or a suspension. It gives way instead: `lock_timeout` ends it
-- after 100 ms of waiting, it rolls back whole, and auth-server sends each rotation alone.
CREATE OR REPLACE FUNCTION "auth"."token_refresh_batch"(
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
$fn$;

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Group commit for refreshes (docs/architecture.md, "Token endpoint"): `token_refresh_batch` runs
 * `token_refresh` for each of several rotations in order, in one statement and one transaction, so
 * refreshes that arrive while others are in flight share a round trip, an executor start-up and a
 * commit. Each rotation's outcome is exactly what it would have been alone after the ones before
 * it (a later one in the same batch sees what an earlier one changed), so the batch is one serial
 * order of its rotations.
 *
 * A batch holds the locks of its done rotations while it does the next one, which a lone refresh
 * never did; a suspension or disconnect waiting on one of them while holding a consent row the
 * batch then needs would be a deadlock. The batch gives way instead: `lock_timeout` ends it after
 * 100 ms of waiting on any lock (well before PostgreSQL's deadlock check, 1 s), it rolls back as a
 * whole, and auth-server sends each of its rotations alone, as before this function.
 *
 * Rotations that narrow scope never come here (their arrays of scopes do not fit one array).
 */
export class TokenRefreshBatch1764800000000 implements MigrationInterface {
  name = 'TokenRefreshBatch1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION "auth"."token_refresh_batch"(
        p_refresh_digests text[],
        p_client_ids text[],
        p_secret_digests text[],
        p_pair_ids text[],
        p_access_digests text[],
        p_new_refresh_digests text[],
        p_access_expires_at timestamptz[],
        p_refresh_expires_at timestamptz[],
        p_at timestamptz[],
        p_expected_access_digests text[]
      )
      RETURNS TABLE (ord integer, outcome text, out_user_id text, out_scopes text[], ended_access_digest text)
      LANGUAGE plpgsql
      SET search_path = auth, pg_temp
      SET lock_timeout = '100ms'
      AS $fn$
      BEGIN
        FOR i IN 1 .. coalesce(cardinality(p_refresh_digests), 0) LOOP
          RETURN QUERY
            SELECT i, r.outcome, r.out_user_id, r.out_scopes, r.ended_access_digest
              FROM token_refresh(p_refresh_digests[i], p_client_ids[i], p_secret_digests[i], NULL,
                                 p_pair_ids[i], p_access_digests[i], p_new_refresh_digests[i],
                                 p_access_expires_at[i], p_refresh_expires_at[i], p_at[i],
                                 p_expected_access_digests[i]) r;
        END LOOP;
      END
      $fn$
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION IF EXISTS "auth"."token_refresh_batch"`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Group commit for code exchanges (docs/architecture.md, "Token endpoint", step 12):
 * `token_exchange_batch` runs `token_exchange` for each of several exchanges in order, in one
 * statement and one transaction, so exchanges that arrive while another is in flight share a round
 * trip, an executor start-up and a commit (one WAL flush). Each exchange's outcome is exactly what
 * it would have been alone after the ones before it: the same code twice in a batch is consumed by
 * the first and answers `replayed` to the second, whose replay auth-server then handles after the
 * batch committed, as it would have after a lone exchange.
 *
 * A batch holds the code rows and consent share locks of its done exchanges while it does the
 * next, which a lone exchange never did. Waiting on a lock then keeps those held too, and the
 * exchanges queued behind the batch's slot wait with it; two batches holding each other's codes
 * (one code sent to two replicas at once) would deadlock. The batch gives way instead, as
 * `token_refresh_batch` does: `lock_timeout` ends it after 100 ms of waiting on any lock (a consent
 * row that a disconnect ends or a member's new approval updates, a code a replay's transaction
 * holds), it rolls back as a whole, consuming no code, and auth-server sends each of its exchanges
 * alone.
 *
 * Created with `enable_seqscan = off`, as migration 1765000000000 set on the other grant functions:
 * every statement in `token_exchange` finds its row by a unique key.
 */
export class TokenExchangeBatch1765100000000 implements MigrationInterface {
  name = 'TokenExchangeBatch1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION "auth"."token_exchange_batch"(
        p_code_digests text[],
        p_client_ids text[],
        p_secret_digests text[],
        p_redirect_uris text[],
        p_code_challenges text[],
        p_pair_ids text[],
        p_access_digests text[],
        p_refresh_digests text[],
        p_access_expires_at timestamptz[],
        p_refresh_expires_at timestamptz[],
        p_at timestamptz[]
      )
      RETURNS TABLE (ord integer, outcome text, out_scopes text[])
      LANGUAGE plpgsql
      SET search_path = auth, pg_temp
      SET lock_timeout = '100ms'
      SET enable_seqscan = off
      AS $fn$
      BEGIN
        FOR i IN 1 .. coalesce(cardinality(p_code_digests), 0) LOOP
          RETURN QUERY
            SELECT i, e.outcome, e.out_scopes
              FROM token_exchange(p_code_digests[i], p_client_ids[i], p_secret_digests[i],
                                  p_redirect_uris[i], p_code_challenges[i], p_pair_ids[i],
                                  p_access_digests[i], p_refresh_digests[i], p_access_expires_at[i],
                                  p_refresh_expires_at[i], p_at[i]) e;
        END LOOP;
      END
      $fn$
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION IF EXISTS "auth"."token_exchange_batch"`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';
import { tokenRefreshInOneUpdate } from './1764700000000-tokenGrantsFewerStatements';

/** How the rotating UPDATE tested that the pair is live, and how it tests it now. */
const LIVE = 't.revoked_at IS NULL';
const LIVE_BY_PRIMARY_KEY = '(t.revoked_at IS NULL) IS TRUE';
const SETTINGS = '\n      SET enable_seqscan = off';

/**
 * token_refresh's rotating UPDATE finds the pair by its primary key, always (docs/architecture.md,
 * "Token endpoint", step 15). Its WHERE said `t.id = … AND t.revoked_at IS NULL`, and the second
 * clause is the predicate of the partial indexes on live pairs (`token_pairs_live_by_member`,
 * `token_pairs_live_by_client`). Whenever the planner thinks few pairs are live (few members, or
 * statistics from a table that was empty), a whole scan of one of them, filtered by id, costs
 * about what the primary key's lookup costs, and PL/pgSQL keeps that plan for the life of the
 * connection. But those indexes keep an entry for every rotated pair until vacuum removes it, so
 * each refresh read every pair rotated since the last vacuum: under load PostgreSQL's CPU per
 * refresh climbed round after round (160 µs to 1.2 ms in a minute) until autovacuum ran.
 *
 * `(… IS NULL) IS TRUE` is the same test (IS NULL is never null), which the planner cannot match
 * to the indexes' predicate, so only the primary key can serve the UPDATE. Nothing else changes.
 */
export class TokenRefreshRotationByPrimaryKey1765200000000 implements MigrationInterface {
  name = 'TokenRefreshRotationByPrimaryKey1765200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(tokenRefreshInOneUpdate(LIVE_BY_PRIMARY_KEY, SETTINGS));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(tokenRefreshInOneUpdate(LIVE, SETTINGS));
  }
}

import { Injectable } from '@nestjs/common';
import { Sql } from '@svc/platform';

/**
 * The grant tables this repository prunes: each with its key, the expiry that retires a row, and
 * what the deleted rows (`gone`, with the columns of `returning`) end elsewhere.
 */
const EXPIRING = {
  codes: { table: 'authorization_codes', key: 'code_digest', expiry: 'expires_at', returning: '1', ends: '' },
  // A pair lives as long as its refresh token, the longer-lived of the two. A family ends with its
  // newest pair: only that one could still have been live, and the older ones are kept only until
  // their own expiry, to catch a rotated token presented again. Newer pairs of the family seen by
  // this statement, even ones another replica is deleting, keep it.
  tokenPairs: {
    table: 'token_pairs',
    key: 'id',
    expiry: 'refresh_expires_at',
    returning: 't.code_digest, t.generation',
    ends: `, ended AS (
         DELETE FROM token_families f USING gone
          WHERE f.code_digest = gone.code_digest
            AND NOT EXISTS (SELECT 1 FROM token_pairs n
                             WHERE n.code_digest = gone.code_digest AND n.generation > gone.generation)
       )`,
  },
} as const;

/**
 * Each delete is one short transaction over a batch of the oldest expired rows (by an index),
 * SKIP LOCKED so replicas prune side by side.
 */
@Injectable()
export class GrantsRetentionRepository {
  constructor(private readonly sql: Sql) {}

  /** Rows of `grants` that expired more than `graceSeconds` ago (and the families they end). */
  async deleteExpired(grants: keyof typeof EXPIRING, graceSeconds: number, limit: number): Promise<number> {
    const { table, key, expiry, returning, ends } = EXPIRING[grants];
    const counted = await this.sql.row<{ deleted: number }>(
      `WITH doomed AS (
         SELECT ${key} FROM ${table}
          WHERE ${expiry} < now() - make_interval(secs => $1)
          ORDER BY ${expiry} LIMIT $2 FOR UPDATE SKIP LOCKED
       ), gone AS (
         DELETE FROM ${table} t USING doomed WHERE t.${key} = doomed.${key} RETURNING ${returning}
       )${ends}
       SELECT count(*)::int AS deleted FROM gone`,
      [graceSeconds, limit],
    );
    return counted?.deleted ?? 0;
  }
}

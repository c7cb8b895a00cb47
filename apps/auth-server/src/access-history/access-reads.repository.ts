import { Injectable } from '@nestjs/common';
import type { AccessReadCount, Scope } from '@svc/contracts';
import { columns, Sql } from '@svc/platform';
import type { ConsentEntity } from '../consents/consent.entity';

export interface DailyReadsRow {
  readonly clientId: string;
  readonly scope: Scope;
  readonly day: string;
  readonly count: number;
  readonly lastAt: Date;
}

type ConsentRow = Pick<ConsentEntity, 'clientId' | 'scopes' | 'revokedAt'> & {
  readonly clientName: string;
  readonly grantedAt: Date;
};

/** How long the history is kept: 13 months of UTC days, counted back from today. */
export const ACCESS_HISTORY_MONTHS = 13;
const RETAINED_SINCE = `(now() AT TIME ZONE 'UTC')::date - make_interval(months => ${ACCESS_HISTORY_MONTHS})`;

@Injectable()
export class AccessReadsRepository {
  constructor(private readonly sql: Sql) {}

  /**
   * Adds a batch of counts in one statement: equal keys are summed first, and rows are taken in
   * key order, so two replicas flushing the same members at once wait for each other instead of
   * deadlocking. Answers the rows written (inserted or added to).
   */
  async add(counts: readonly AccessReadCount[]): Promise<number> {
    if (counts.length === 0) return 0;
    // An INSERT answers no row count through TypeORM: the rows it returns are the count.
    const written = await this.sql.rows(
      `INSERT INTO access_reads AS r (user_id, client_id, scope, day, count, last_at)
       SELECT u, c, s, d, sum(n), max(t)
         FROM unnest($1::text[], $2::text[], $3::text[], $4::date[], $5::bigint[], $6::timestamptz[])
              AS x(u, c, s, d, n, t)
        GROUP BY u, c, s, d
        ORDER BY u, c, s, d
       ON CONFLICT (user_id, client_id, scope, day)
       DO UPDATE SET count = r.count + EXCLUDED.count, last_at = greatest(r.last_at, EXCLUDED.last_at)
       RETURNING 1`,
      columns(counts, ['user_id', 'client_id', 'scope', 'day', 'count', 'last_at']),
    );
    return written.length;
  }

  /** The member's retained history, oldest day first (the primary key's prefix). */
  memberReads(userId: string): Promise<DailyReadsRow[]> {
    return this.sql.rows<DailyReadsRow>(
      `SELECT client_id AS "clientId", scope, to_char(day, 'YYYY-MM-DD') AS day, count::int AS count,
              last_at AS "lastAt"
         FROM access_reads
        WHERE user_id = $1 AND day >= ${RETAINED_SINCE}
        ORDER BY day, client_id, scope`,
      [userId],
    );
  }

  /** Every consent the member gave, ended ones too, newest first. */
  memberConsents(userId: string): Promise<ConsentRow[]> {
    return this.sql.rows<ConsentRow>(
      `SELECT c.client_id AS "clientId", p.name AS "clientName", c.scopes, c.connected_at AS "grantedAt",
              c.revoked_at AS "revokedAt"
         FROM consents c JOIN partners p ON p.client_id = c.client_id
        WHERE c.user_id = $1
        ORDER BY c.connected_at DESC, c.client_id`,
      [userId],
    );
  }

  /** Display names of `clientIds` (partners that read but whose consents are gone). */
  partnerNames(clientIds: readonly string[]): Promise<{ clientId: string; name: string }[]> {
    if (clientIds.length === 0) return Promise.resolve([]);
    return this.sql.rows(
      `SELECT client_id AS "clientId", name FROM partners WHERE client_id = ANY($1::text[])`,
      [[...clientIds]],
    );
  }

  /** One batch of days older than the retention, oldest first, SKIP LOCKED so replicas prune side by side. */
  async deleteExpired(limit: number): Promise<number> {
    const counted = await this.sql.row<{ deleted: number }>(
      `WITH doomed AS (
         SELECT user_id, client_id, scope, day FROM access_reads
          WHERE day < ${RETAINED_SINCE}
          ORDER BY day LIMIT $1 FOR UPDATE SKIP LOCKED
       ), gone AS (
         DELETE FROM access_reads r USING doomed d
          WHERE (r.user_id, r.client_id, r.scope, r.day) = (d.user_id, d.client_id, d.scope, d.day)
          RETURNING 1
       )
       SELECT count(*)::int AS deleted FROM gone`,
      [limit],
    );
    return counted?.deleted ?? 0;
  }
}

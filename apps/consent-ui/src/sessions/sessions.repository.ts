import { Injectable } from '@nestjs/common';
import { Sql } from '@svc/platform';
import type { SessionTable, StoredSession } from './session.entity';

const COMMON = {
  idDigest: 'id_digest',
  csrfSecret: 'csrf_secret',
  createdAt: 'created_at',
  expiresAt: 'expires_at',
};

/** Every field of a kind's rows and its column. */
function columnsOf(kind: SessionTable): [string, string][] {
  const idle = kind.idleMs !== undefined ? { lastSeenAt: 'last_seen_at' } : {};
  return Object.entries({ ...COMMON, ...idle, ...kind.columns });
}

/** The session tables' queries, for either kind. Only this file talks to PostgreSQL about sessions. */
@Injectable()
export class SessionsRepository {
  constructor(private readonly sql: Sql) {}

  async insert(kind: SessionTable, s: StoredSession): Promise<void> {
    const columns = columnsOf(kind);
    await this.sql.rows(
      `INSERT INTO ${kind.table} (${columns.map(([, c]) => c).join(', ')})
       VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')})`,
      columns.map(([f]) => s[f]),
    );
  }

  /** The session with this digest, unless it has expired. */
  findLive(kind: SessionTable, idDigest: string, now: Date): Promise<StoredSession | null> {
    const columns = columnsOf(kind).map(([f, c]) => `${c} AS "${f}"`);
    return this.sql.row<StoredSession>(
      `SELECT ${columns.join(', ')} FROM ${kind.table} WHERE id_digest = $1 AND expires_at > $2 LIMIT 1`,
      [idDigest, now],
    );
  }

  async touch(kind: SessionTable, idDigest: string, now: Date): Promise<void> {
    await this.sql.affected(`UPDATE ${kind.table} SET last_seen_at = $2 WHERE id_digest = $1`, [
      idDigest,
      now,
    ]);
  }

  async delete(kind: SessionTable, idDigest: string): Promise<void> {
    await this.sql.affected(`DELETE FROM ${kind.table} WHERE id_digest = $1`, [idDigest]);
  }

  /**
   * Removes up to `limit` expired sessions. Called whenever a session starts, so the table stays
   * small without a scheduler; bounded, so no sign-in ever waits on a large purge.
   */
  deleteExpired(kind: SessionTable, now: Date, limit: number): Promise<number> {
    return this.sql.affected(
      `DELETE FROM ${kind.table} WHERE id_digest IN (
         SELECT id_digest FROM ${kind.table} WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2
       )`,
      [now, limit],
    );
  }
}

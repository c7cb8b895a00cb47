import { Injectable } from '@nestjs/common';
import { Sql } from '@svc/platform';
import type { StoredSession } from './session.entity';

/** The sessions table's queries. Only this file talks to PostgreSQL about sessions. */
@Injectable()
export class SessionsRepository {
  constructor(private readonly sql: Sql) {}

  async insert(s: StoredSession): Promise<void> {
    await this.sql.rows(
      `INSERT INTO sessions (id_digest, user_id, csrf_secret, created_at, last_seen_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [s.idDigest, s.userId, s.csrfSecret, s.createdAt, s.lastSeenAt, s.expiresAt],
    );
  }

  /** The session with this digest, unless it has expired. */
  findLive(idDigest: string, now: Date): Promise<StoredSession | null> {
    return this.sql.row<StoredSession>(
      `SELECT id_digest AS "idDigest", user_id AS "userId", csrf_secret AS "csrfSecret", created_at AS "createdAt",
              last_seen_at AS "lastSeenAt", expires_at AS "expiresAt"
         FROM sessions WHERE id_digest = $1 AND expires_at > $2 LIMIT 1`,
      [idDigest, now],
    );
  }

  async touch(idDigest: string, now: Date): Promise<void> {
    await this.sql.affected(`UPDATE sessions SET last_seen_at = $2 WHERE id_digest = $1`, [idDigest, now]);
  }

  async delete(idDigest: string): Promise<void> {
    await this.sql.affected(`DELETE FROM sessions WHERE id_digest = $1`, [idDigest]);
  }

  /**
   * Removes up to `limit` expired sessions. Called on every sign-in, so the table stays small
   * without a scheduler; bounded, so no sign-in ever waits on a large purge.
   */
  deleteExpired(now: Date, limit: number): Promise<number> {
    return this.sql.affected(
      `DELETE FROM sessions WHERE id_digest IN (
         SELECT id_digest FROM sessions WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2
       )`,
      [now, limit],
    );
  }
}

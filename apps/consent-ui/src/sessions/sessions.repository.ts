import { Injectable } from '@nestjs/common';
import { DataSource, MoreThan } from 'typeorm';
import { SessionEntity } from './session.entity';

export interface StoredSession {
  readonly idDigest: string;
  readonly userId: string;
  readonly csrfSecret: string;
  readonly createdAt: Date;
  /** The last request that used the session, to a minute (the idle timeout). */
  readonly lastSeenAt: Date;
  readonly expiresAt: Date;
}

/** The sessions table's queries. Only this file talks to TypeORM about sessions. */
@Injectable()
export class SessionsRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insert(session: StoredSession): Promise<void> {
    await this.dataSource.getRepository(SessionEntity).insert({ ...session });
  }

  /** The session with this digest, unless it has expired. */
  async findLive(idDigest: string, now: Date): Promise<StoredSession | undefined> {
    const row = await this.dataSource
      .getRepository(SessionEntity)
      .findOne({ where: { idDigest, expiresAt: MoreThan(now) } });
    return row ? toStoredSession(row) : undefined;
  }

  async touch(idDigest: string, now: Date): Promise<void> {
    await this.dataSource.getRepository(SessionEntity).update({ idDigest }, { lastSeenAt: now });
  }

  async delete(idDigest: string): Promise<void> {
    await this.dataSource.getRepository(SessionEntity).delete({ idDigest });
  }

  /**
   * Removes up to `limit` expired sessions. Called on every sign-in, so the table stays small
   * without a scheduler; bounded, so no sign-in ever waits on a large purge.
   */
  async deleteExpired(now: Date, limit: number): Promise<number> {
    const table = this.dataSource.getRepository(SessionEntity).metadata.tablePath;
    const quoted = table
      .split('.')
      .map((part) => `"${part}"`)
      .join('.');
    const result: unknown = await this.dataSource.query(
      `DELETE FROM ${quoted} WHERE id_digest IN (
         SELECT id_digest FROM ${quoted} WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2
       )`,
      [now, limit],
    );
    // node-postgres through TypeORM answers a DELETE with [rows, affected].
    return Array.isArray(result) && typeof result[1] === 'number' ? result[1] : 0;
  }
}

function toStoredSession(row: SessionEntity): StoredSession {
  return {
    idDigest: row.idDigest,
    userId: row.userId,
    csrfSecret: row.csrfSecret,
    createdAt: row.createdAt,
    lastSeenAt: row.lastSeenAt,
    expiresAt: row.expiresAt,
  };
}

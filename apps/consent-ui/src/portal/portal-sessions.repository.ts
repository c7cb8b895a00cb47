import { Injectable } from '@nestjs/common';
import { Sql } from '@svc/platform';
import type { StoredPortalSession } from './portal-session.entity';

const COLUMNS = `id_digest AS "idDigest", ref, client_id AS "clientId", partner_name AS "partnerName",
  sponsorship, frame_origins AS "frameOrigins", csrf_secret AS "csrfSecret", created_at AS "createdAt",
  expires_at AS "expiresAt"`;

/** The portal_sessions table's queries. */
@Injectable()
export class PortalSessionsRepository {
  constructor(private readonly sql: Sql) {}

  async insert(s: StoredPortalSession): Promise<void> {
    await this.sql.affected(
      `INSERT INTO portal_sessions (id_digest, ref, client_id, partner_name, sponsorship, frame_origins,
                                    csrf_secret, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        s.idDigest,
        s.ref,
        s.clientId,
        s.partnerName,
        s.sponsorship,
        [...s.frameOrigins],
        s.csrfSecret,
        s.createdAt,
        s.expiresAt,
      ],
    );
  }

  findLive(idDigest: string, now: Date): Promise<StoredPortalSession | null> {
    return this.sql.row<StoredPortalSession>(
      `SELECT ${COLUMNS} FROM portal_sessions WHERE id_digest = $1 AND expires_at > $2`,
      [idDigest, now],
    );
  }

  async delete(idDigest: string): Promise<void> {
    await this.sql.affected(`DELETE FROM portal_sessions WHERE id_digest = $1`, [idDigest]);
  }

  /** Removes up to `limit` expired sessions; called when a session starts, so no scheduler is needed. */
  deleteExpired(now: Date, limit: number): Promise<number> {
    return this.sql.affected(
      `DELETE FROM portal_sessions WHERE id_digest IN (
         SELECT id_digest FROM portal_sessions WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2)`,
      [now, limit],
    );
  }
}

import { Injectable } from '@nestjs/common';
import { Sql } from '@svc/platform';

/** The portal_links table's queries. */
@Injectable()
export class PortalLinksRepository {
  constructor(private readonly sql: Sql) {}

  /** Stores a new link; also drops up to 100 links that expired a day ago (no scheduler needed). */
  async insert(tokenDigest: string, clientId: string, expiresAt: Date): Promise<void> {
    await this.sql.affected(
      `WITH purge AS (
         DELETE FROM portal_links WHERE token_digest IN (
           SELECT token_digest FROM portal_links WHERE expires_at < now() - interval '1 day'
            ORDER BY expires_at LIMIT 100))
       INSERT INTO portal_links (token_digest, client_id, expires_at) VALUES ($1, $2, $3)`,
      [tokenDigest, clientId, expiresAt],
    );
  }

  /**
   * Spends the link in one statement: of two concurrent visits exactly one gets the client_id;
   * a used or expired link gives nothing.
   */
  async spend(tokenDigest: string): Promise<string | undefined> {
    const row = await this.sql.row<{ clientId: string }>(
      `UPDATE portal_links SET used_at = now()
        WHERE token_digest = $1 AND used_at IS NULL AND expires_at > now()
        RETURNING client_id AS "clientId"`,
      [tokenDigest],
    );
    return row?.clientId;
  }

  /** The link's partner while it can still be spent (unused, unexpired); nothing is changed. */
  async findUnspent(tokenDigest: string): Promise<string | undefined> {
    const row = await this.sql.row<{ clientId: string }>(
      `SELECT client_id AS "clientId" FROM portal_links
        WHERE token_digest = $1 AND used_at IS NULL AND expires_at > now()`,
      [tokenDigest],
    );
    return row?.clientId;
  }
}

import { Injectable } from '@nestjs/common';
import { Sql, type Transaction } from '@svc/platform';
import type { ConsentEntity } from './consent.entity';

type ActiveConnection = Pick<ConsentEntity, 'clientId' | 'scopes' | 'connectedAt'> & { clientName: string };

const SELECT_ACTIVE = `SELECT id, user_id AS "userId", client_id AS "clientId", scopes, connected_at AS "connectedAt",
       updated_at AS "updatedAt", revoked_at AS "revokedAt"
  FROM consents WHERE user_id = $1 AND client_id = $2 AND revoked_at IS NULL`;

/**
 * Lock order: the consent row, then token pairs. Issuing (the grant functions) takes it FOR SHARE,
 * a disconnect FOR UPDATE, so a disconnect waits for issuing in flight and later issuing sees the
 * consent gone.
 */
@Injectable()
export class ConsentsRepository {
  constructor(private readonly sql: Sql) {}

  lockActiveForUpdate(tx: Transaction, userId: string, clientId: string): Promise<ConsentEntity | null> {
    return this.sql.row<ConsentEntity>(`${SELECT_ACTIVE} FOR UPDATE`, [userId, clientId], tx);
  }

  /** Records a grant: a new consent, or the active one widened to include `scopes`. */
  async grant(tx: Transaction, userId: string, clientId: string, scopes: readonly string[]): Promise<void> {
    await this.sql.rows(
      `INSERT INTO consents (user_id, client_id, scopes) VALUES ($1, $2, $3)
       ON CONFLICT (user_id, client_id) WHERE revoked_at IS NULL
       DO UPDATE SET scopes = ARRAY(SELECT DISTINCT unnest(consents.scopes || EXCLUDED.scopes) ORDER BY 1),
                     updated_at = now()`,
      [userId, clientId, [...scopes]],
      tx,
    );
  }

  async revoke(tx: Transaction, id: string): Promise<void> {
    await this.sql.affected(
      `UPDATE consents SET revoked_at = now(), updated_at = now() WHERE id = $1`,
      [id],
      tx,
    );
  }

  /** Which of `userIds` hold a live consent for `clientId` (one statement, uses consents_one_active). */
  async connectedAmong(clientId: string, userIds: readonly string[]): Promise<string[]> {
    if (userIds.length === 0) return [];
    const rows = await this.sql.rows<Pick<ConsentEntity, 'userId'>>(
      `SELECT user_id AS "userId" FROM consents
        WHERE user_id = ANY($1::text[]) AND client_id = $2 AND revoked_at IS NULL`,
      [[...userIds], clientId],
    );
    return rows.map((r) => r.userId);
  }

  listActive(userId: string): Promise<ActiveConnection[]> {
    return this.sql.rows<ActiveConnection>(
      `SELECT c.client_id AS "clientId", p.name AS "clientName", c.scopes, c.connected_at AS "connectedAt"
         FROM consents c JOIN partners p ON p.client_id = c.client_id
        WHERE c.user_id = $1 AND c.revoked_at IS NULL
        ORDER BY c.connected_at DESC, c.client_id`,
      [userId],
    );
  }
}

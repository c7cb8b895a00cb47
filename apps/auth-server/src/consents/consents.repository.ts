import { Injectable } from '@nestjs/common';
import { TransactionRunner, type Transaction } from '@svc/platform';
import { ConsentEntity } from './consent.entity';

export interface ActiveConnection {
  readonly clientId: string;
  readonly clientName: string;
  readonly scopes: string[];
  readonly connectedAt: Date;
}

/**
 * Lock order, everywhere: the consent row first, then token pairs. Token issuing and rotation
 * take the consent row FOR SHARE (many at once); a disconnect takes it FOR UPDATE, so it waits
 * for issuing in flight and every later issuing sees the consent gone.
 */
@Injectable()
export class ConsentsRepository {
  constructor(private readonly transactions: TransactionRunner) {}

  lockActiveForShare(tx: Transaction, userId: string, clientId: string): Promise<ConsentEntity | null> {
    return tx
      .createQueryBuilder(ConsentEntity, 'c')
      .where('c.userId = :userId AND c.clientId = :clientId AND c.revokedAt IS NULL', { userId, clientId })
      .setLock('pessimistic_read')
      .getOne();
  }

  lockActiveForUpdate(tx: Transaction, userId: string, clientId: string): Promise<ConsentEntity | null> {
    return tx
      .createQueryBuilder(ConsentEntity, 'c')
      .where('c.userId = :userId AND c.clientId = :clientId AND c.revokedAt IS NULL', { userId, clientId })
      .setLock('pessimistic_write')
      .getOne();
  }

  /** Records a grant: a new consent, or the active one widened to include `scopes`. */
  async grant(tx: Transaction, userId: string, clientId: string, scopes: readonly string[]): Promise<void> {
    await tx.query(
      `INSERT INTO consents (user_id, client_id, scopes) VALUES ($1, $2, $3)
       ON CONFLICT (user_id, client_id) WHERE revoked_at IS NULL
       DO UPDATE SET scopes = ARRAY(SELECT DISTINCT unnest(consents.scopes || EXCLUDED.scopes) ORDER BY 1),
                     updated_at = now()`,
      [userId, clientId, [...scopes]],
    );
  }

  async revoke(tx: Transaction, id: string): Promise<void> {
    await tx.update(ConsentEntity, { id }, { revokedAt: () => 'now()', updatedAt: () => 'now()' });
  }

  /** Which of `userIds` hold a live consent for `clientId` (one statement, uses consents_one_active). */
  async connectedAmong(clientId: string, userIds: readonly string[]): Promise<string[]> {
    if (userIds.length === 0) return [];
    const rows = await this.transactions.outside.query<{ user_id: string }[]>(
      `SELECT user_id FROM consents
        WHERE user_id = ANY($1::text[]) AND client_id = $2 AND revoked_at IS NULL`,
      [[...userIds], clientId],
    );
    return rows.map((r) => r.user_id);
  }

  async listActive(userId: string): Promise<ActiveConnection[]> {
    const rows = await this.transactions.outside.query<
      { client_id: string; name: string; scopes: string[]; connected_at: Date }[]
    >(
      `SELECT c.client_id, p.name, c.scopes, c.connected_at
         FROM consents c JOIN partners p ON p.client_id = c.client_id
        WHERE c.user_id = $1 AND c.revoked_at IS NULL
        ORDER BY c.connected_at DESC, c.client_id`,
      [userId],
    );
    return rows.map((r) => ({
      clientId: r.client_id,
      clientName: r.name,
      scopes: r.scopes,
      connectedAt: r.connected_at,
    }));
  }
}

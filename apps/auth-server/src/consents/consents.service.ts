import { Injectable } from '@nestjs/common';
import { CREW_EVENTS_EXCHANGE, type Connection, type ServiceEvent } from '@svc/contracts';
import { newId, OutboxRepository, TransactionRunner } from '@svc/platform';
import { IntrospectionCache } from '@svc/security';
import { TokenPairsRepository } from '../tokens/token-pairs.repository';
import { ConsentsRepository } from './consents.repository';

@Injectable()
export class ConsentsService {
  constructor(
    private readonly consents: ConsentsRepository,
    private readonly pairs: TokenPairsRepository,
    private readonly outbox: OutboxRepository,
    private readonly transactions: TransactionRunner,
    private readonly cache: IntrospectionCache,
  ) {}

  async list(userId: string): Promise<Connection[]> {
    const active = await this.consents.listActive(userId);
    return active.map((c) => ({
      client_id: c.clientId,
      client_name: c.clientName,
      scopes: c.scopes,
      connected_at: c.connectedAt.toISOString(),
    }));
  }

  /** The members among `userIds` connected to `clientId` now: only these may be named to it. */
  connectedAmong(clientId: string, userIds: readonly string[]): Promise<string[]> {
    return this.consents.connectedAmong(clientId, userIds);
  }

  /**
   * Disconnect: the consent ends, every token of that partner for that member is revoked in the
   * same transaction (tombstoned in the cache before it commits), and `user.consent.revoked` is
   * written to the outbox so the partner is told to delete its copy. The consent row is locked
   * first, so a refresh racing this either finishes before (and its new pair is revoked here) or
   * starts after (and finds no consent).
   */
  async disconnect(userId: string, clientId: string): Promise<boolean> {
    return this.transactions.run(async (tx) => {
      const consent = await this.consents.lockActiveForUpdate(tx, userId, clientId);
      if (!consent) return false;
      await this.consents.revoke(tx, consent.id);
      const digests = await this.pairs.revokeLive(tx, { userId, clientId }, 'disconnected');
      const event: ServiceEvent = {
        id: newId('evt', 16),
        type: 'user.consent.revoked',
        user_id: userId,
        client_id: clientId,
        created_at: new Date().toISOString(),
      };
      await this.outbox.addEvent(tx, CREW_EVENTS_EXCHANGE, event);
      await this.cache.tombstone(digests);
      return true;
    });
  }
}

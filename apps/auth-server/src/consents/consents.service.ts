import { Injectable } from '@nestjs/common';
import { CREW_EVENTS_EXCHANGE, type Connection, type ServiceEvent } from '@svc/contracts';
import { newId, OutboxRepository, type Transaction } from '@svc/platform';
import { ConsentsRepository } from './consents.repository';

@Injectable()
export class ConsentsService {
  constructor(
    private readonly consents: ConsentsRepository,
    private readonly outbox: OutboxRepository,
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
   * Ends the consent, its row locked first (FOR UPDATE), and writes `user.consent.revoked` to the
   * outbox so the partner is told to delete its copy. False when there was none to end.
   */
  async end(tx: Transaction, userId: string, clientId: string): Promise<boolean> {
    const consent = await this.consents.lockActiveForUpdate(tx, userId, clientId);
    if (!consent) return false;
    await this.consents.revoke(tx, consent.id);
    const event: ServiceEvent = {
      id: newId('evt', 16),
      type: 'user.consent.revoked',
      user_id: userId,
      client_id: clientId,
      created_at: new Date().toISOString(),
    };
    await this.outbox.addEvent(tx, CREW_EVENTS_EXCHANGE, event);
    return true;
  }
}

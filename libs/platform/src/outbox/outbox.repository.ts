import type { EntityManager } from 'typeorm';
import { OutboxMessageEntity } from './outbox-message.entity';

export interface OutboxEntry {
  readonly messageId: string;
  readonly exchange: string;
  readonly routingKey: string;
  readonly payload: unknown;
}

export interface ClaimedMessage extends OutboxEntry {
  readonly id: string;
}

/** The outbox's queries. Only this file talks to TypeORM about the outbox. */
export class OutboxRepository {
  /** Adds a message inside the caller's transaction (pass the transaction's manager). */
  async add(manager: EntityManager, entry: OutboxEntry): Promise<void> {
    await manager.insert(OutboxMessageEntity, {
      messageId: entry.messageId,
      exchange: entry.exchange,
      routingKey: entry.routingKey,
      payload: entry.payload as object,
    });
  }

  /**
   * Locks the oldest unpublished messages. SKIP LOCKED lets several relays (replicas) work side
   * by side: a row locked by one is invisible to the others until that transaction ends.
   */
  async claimBatch(manager: EntityManager, limit: number): Promise<ClaimedMessage[]> {
    const rows = await manager
      .createQueryBuilder(OutboxMessageEntity, 'o')
      .select(['o.id', 'o.messageId', 'o.exchange', 'o.routingKey', 'o.payload'])
      .where('o.publishedAt IS NULL')
      .orderBy('o.id', 'ASC')
      .limit(limit)
      .setLock('pessimistic_write')
      .setOnLocked('skip_locked')
      .getMany();
    return rows.map((r) => ({
      id: r.id,
      messageId: r.messageId,
      exchange: r.exchange,
      routingKey: r.routingKey,
      payload: r.payload,
    }));
  }

  async markPublished(manager: EntityManager, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await manager
      .createQueryBuilder()
      .update(OutboxMessageEntity)
      .set({ publishedAt: () => 'now()', attempts: () => 'attempts + 1', lastError: null })
      .whereInIds(ids)
      .execute();
  }

  async markFailed(manager: EntityManager, ids: readonly string[], error: string): Promise<void> {
    if (ids.length === 0) return;
    await manager
      .createQueryBuilder()
      .update(OutboxMessageEntity)
      .set({ attempts: () => 'attempts + 1', lastError: error.slice(0, 1000) })
      .whereInIds(ids)
      .execute();
  }
}

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
   * Adds an event for `exchange` inside the caller's transaction: routed by its type, published
   * under its id (the id receivers deduplicate on), the event itself as the body.
   */
  addEvent(
    manager: EntityManager,
    exchange: string,
    event: { readonly id: string; readonly type: string },
  ): Promise<void> {
    return this.add(manager, { messageId: event.id, exchange, routingKey: event.type, payload: event });
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

  /**
   * Deletes up to `limit` published messages created more than `olderThanDays` ago; returns how
   * many. Unpublished messages are never deleted, however old: an event that could not reach the
   * broker is kept until it does. SKIP LOCKED lets several replicas prune side by side, and the
   * partial index `outbox_messages_retention` keeps each batch a range scan of the old rows only.
   */
  async prunePublished(manager: EntityManager, olderThanDays: number, limit: number): Promise<number> {
    const rows = await manager.query<{ deleted: number }[]>(
      `WITH doomed AS (
         SELECT id FROM outbox_messages
          WHERE published_at IS NOT NULL AND created_at < now() - make_interval(days => $1)
          ORDER BY created_at
          LIMIT $2
          FOR UPDATE SKIP LOCKED
       ), gone AS (
         DELETE FROM outbox_messages o USING doomed WHERE o.id = doomed.id RETURNING 1
       )
       SELECT count(*)::int AS deleted FROM gone`,
      [olderThanDays, limit],
    );
    return rows[0]?.deleted ?? 0;
  }

  /** Messages not yet on the broker, and how long the oldest has waited (seconds; 0 when none). */
  async backlog(manager: EntityManager): Promise<{ messages: number; oldestSeconds: number }> {
    const rows = await manager.query<{ messages: number; oldest_seconds: number | null }[]>(
      `SELECT count(*)::int AS messages,
              extract(epoch FROM now() - min(created_at))::float8 AS oldest_seconds
         FROM outbox_messages WHERE published_at IS NULL`,
    );
    return { messages: rows[0]?.messages ?? 0, oldestSeconds: rows[0]?.oldest_seconds ?? 0 };
  }
}

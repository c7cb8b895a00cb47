import { Injectable } from '@nestjs/common';
import { Sql } from '../database/sql';
import type { Transaction } from '../database/transaction-runner';
import { traceHeaders } from '../tracing/tracing';
import type { OutboxMessage } from './outbox-message.entity';

export type OutboxEntry = Pick<OutboxMessage, 'messageId' | 'exchange' | 'routingKey' | 'payload'>;

export type ClaimedMessage = OutboxEntry & Pick<OutboxMessage, 'id' | 'traceContext'>;

/** The outbox's queries. Only this file writes SQL about the outbox. */
@Injectable()
export class OutboxRepository {
  constructor(private readonly sql: Sql) {}

  /** Adds a message inside the caller's transaction. */
  async add(tx: Transaction, entry: OutboxEntry): Promise<void> {
    const traceparent = traceHeaders()?.traceparent;
    const values = [entry.messageId, entry.exchange, entry.routingKey, JSON.stringify(entry.payload)];
    await this.sql.rows(
      traceparent === undefined
        ? `INSERT INTO outbox_messages (message_id, exchange, routing_key, payload) VALUES ($1, $2, $3, $4::jsonb)`
        : `INSERT INTO outbox_messages (message_id, exchange, routing_key, payload, trace_context)
           VALUES ($1, $2, $3, $4::jsonb, $5)`,
      traceparent === undefined ? values : [...values, traceparent],
      tx,
    );
  }

  /**
   * Adds an event for `exchange` inside the caller's transaction: routed by its type, published
   * under its id (the id receivers deduplicate on), the event itself as the body.
   */
  addEvent(
    tx: Transaction,
    exchange: string,
    event: { readonly id: string; readonly type: string },
  ): Promise<void> {
    return this.add(tx, { messageId: event.id, exchange, routingKey: event.type, payload: event });
  }

  /**
   * Claims the oldest unpublished messages and marks them published, in one statement inside the
   * caller's transaction: the mark becomes visible only when the relay commits after the broker's
   * confirms, and a rollback (a crash, a refused batch) leaves them unpublished. SKIP LOCKED lets
   * several relays (replicas) work side by side: a row claimed by one is invisible to the others
   * until that transaction ends. One row version per message and one round trip per batch, where
   * a locking SELECT and a later UPDATE wrote each row twice. Oldest first, as claimed.
   */
  async claimBatch(tx: Transaction, limit: number): Promise<ClaimedMessage[]> {
    const rows = await this.sql.rows<ClaimedMessage>(
      `UPDATE outbox_messages o
          SET published_at = now(), attempts = o.attempts + 1, last_error = NULL
        WHERE o.id IN (SELECT id FROM outbox_messages WHERE published_at IS NULL
                        ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING o.id, o.message_id AS "messageId", o.exchange, o.routing_key AS "routingKey", o.payload,
                 o.trace_context AS "traceContext"`,
      [limit],
      tx,
    );
    // RETURNING follows the plan, not the subquery's ORDER BY: publish oldest first as before.
    // bigserial ids as pg returns them (decimal strings, no leading zeros), compared numerically.
    return rows.sort((a, b) => a.id.length - b.id.length || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /**
   * Puts claimed messages the broker refused back to unpublished, with the reason, inside the
   * claiming transaction (their attempt still counts).
   */
  async releaseFailed(tx: Transaction, ids: readonly string[], error: string): Promise<void> {
    if (ids.length === 0) return;
    await this.sql.affected(
      `UPDATE outbox_messages SET published_at = NULL, last_error = $2 WHERE id = ANY($1::bigint[])`,
      [ids, error.slice(0, 1000)],
      tx,
    );
  }

  /**
   * Deletes up to `limit` published messages created more than `olderThanDays` ago; returns how
   * many. Unpublished messages are never deleted, however old: an event that could not reach the
   * broker is kept until it does. SKIP LOCKED lets several replicas prune side by side, and the
   * partial index `outbox_messages_retention` keeps each batch a range scan of the old rows only.
   */
  async prunePublished(olderThanDays: number, limit: number): Promise<number> {
    const row = await this.sql.row<{ deleted: number }>(
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
    return row?.deleted ?? 0;
  }

  /** Messages not yet on the broker, and how long the oldest has waited (seconds; 0 when none). */
  async backlog(): Promise<{ messages: number; oldestSeconds: number }> {
    const row = await this.sql.row<{ messages: number; oldestSeconds: number | null }>(
      `SELECT count(*)::int AS messages,
              extract(epoch FROM now() - min(created_at))::float8 AS "oldestSeconds"
         FROM outbox_messages WHERE published_at IS NULL`,
    );
    return { messages: row?.messages ?? 0, oldestSeconds: row?.oldestSeconds ?? 0 };
  }
}

import type { BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';
import { EVENT_BATCH_CONTENT_TYPE, EVENTS_PER_MESSAGE, type EventBatch } from '@svc/contracts';
import type { Logger } from 'pino';
import type { TransactionRunner } from '../database/transaction-runner';
import type { AmqpConnection } from '../messaging/amqp-connection';
import {
  contextFromHeaders,
  failSpan,
  inSpan,
  spanHeaders,
  SpanKind,
  startSpan,
  traceHeaders,
  type SpanOptions,
} from '../tracing/tracing';
import type { ClaimedMessage, OutboxRepository } from './outbox.repository';

export interface OutboxRelayOptions {
  readonly batchSize?: number;
  /** Pause between polls when the outbox is empty or the broker refused. */
  readonly idleMs?: number;
  /**
   * The routing keys whose messages are always packed (EVENT_BATCH_CONTENT_TYPE), a lone one too:
   * their consumers read packs only. Every other message goes alone, as its payload.
   */
  readonly batchable?: (routingKey: string) => boolean;
}

/**
 * Moves committed outbox rows to RabbitMQ. A batch is claimed and marked published in one
 * statement (the rows stay locked until the commit), published with publisher confirms (many in
 * flight at once), and committed; the messages the broker refused are put back as unpublished in
 * the same transaction and retried on the next poll. A crash between the confirm and the commit
 * republishes the batch: delivery is at least once, and consumers dedupe on the message id.
 */
export class OutboxRelay implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private running = false;
  private loop?: Promise<void>;
  private wake?: () => void;

  constructor(
    private readonly transactions: TransactionRunner,
    private readonly repository: OutboxRepository,
    private readonly amqp: AmqpConnection,
    private readonly logger: Logger,
    private readonly options: OutboxRelayOptions = {},
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Finishes the batch in progress, then stops. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
  }

  /** Runs with the app; its batch is finished before the app's connections close. */
  onApplicationBootstrap(): void {
    this.start();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.stop();
  }

  /** Publishes one batch; returns how many rows were published. */
  async relayOnce(): Promise<number> {
    const batchSize = this.options.batchSize ?? 100;
    return this.transactions.run(async (tx) => {
      const batch = await this.repository.claimBatch(tx, batchSize);
      if (batch.length === 0) return 0;
      const messages = this.pack(batch);
      const results = await Promise.allSettled(
        messages.map(({ packed, rows }) => (packed ? this.publishPacked(rows) : this.publishAlone(rows[0]))),
      );
      // Claimed as published: only the refused ones go back, with the reason.
      const failed = messages
        .filter((_, i) => results[i].status === 'rejected')
        .flatMap(({ rows }) => rows.map((m) => m.id));
      if (failed.length > 0) {
        const reason = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
          ?.reason as unknown;
        const message = reason instanceof Error ? reason.message : String(reason);
        await this.repository.releaseFailed(tx, failed, message);
        this.logger.warn({ failed: failed.length }, 'outbox: broker refused messages; will retry');
      }
      return batch.length - failed.length;
    });
  }

  /**
   * The claimed rows as messages: rows of a batchable routing key (and one exchange) packed in claim
   * order, up to EVENTS_PER_MESSAGE to a message; any other row alone.
   */
  private pack(batch: ClaimedMessage[]): { readonly packed: boolean; readonly rows: ClaimedMessage[] }[] {
    const batchable = this.options.batchable ?? (() => false);
    const messages: { packed: boolean; rows: ClaimedMessage[] }[] = [];
    const open = new Map<string, ClaimedMessage[]>();
    for (const m of batch) {
      if (!batchable(m.routingKey)) {
        messages.push({ packed: false, rows: [m] });
        continue;
      }
      const key = `${m.exchange}\n${m.routingKey}`;
      let rows = open.get(key);
      if (!rows || rows.length === EVENTS_PER_MESSAGE) {
        rows = [];
        open.set(key, rows);
        messages.push({ packed: true, rows });
      }
      rows.push(m);
    }
    return messages;
  }

  /**
   * Events in one message (EVENT_BATCH_CONTENT_TYPE). The pack belongs to no one trace: each event
   * written under a trace gets its own publish span there, whose context its entry carries for the
   * consumer's span of that event to continue (with tracing off, the context the row was written
   * under).
   */
  private async publishPacked(events: ClaimedMessage[]): Promise<void> {
    const [first] = events;
    const spans = events.map((m) =>
      m.traceContext === null
        ? undefined
        : startSpan(`publish ${m.routingKey}`, publishSpan(m, m.traceContext)),
    );
    const batch: EventBatch = {
      events: events.map((m, i) => {
        const traceparent = spanHeaders(spans[i])?.traceparent ?? m.traceContext;
        return {
          message_id: m.messageId,
          ...(traceparent === null ? {} : { traceparent }),
          payload: m.payload,
        };
      }),
    };
    try {
      await this.amqp.publish(first.exchange, first.routingKey, Buffer.from(JSON.stringify(batch)), {
        messageId: `batch:${first.messageId}`,
        contentType: EVENT_BATCH_CONTENT_TYPE,
      });
    } catch (err) {
      for (const span of spans) failSpan(span, err);
      throw err;
    } finally {
      for (const span of spans) span?.end();
    }
  }

  /** One row as its payload; a row written under a trace, in a span of it that its consumers continue. */
  private publishAlone(m: ClaimedMessage): Promise<void> {
    const { traceContext } = m;
    const publish = (headers?: Record<string, string>) =>
      this.amqp.publish(m.exchange, m.routingKey, Buffer.from(JSON.stringify(m.payload)), {
        messageId: m.messageId,
        ...(headers && { headers }),
      });
    if (traceContext === null) return publish();
    // A relay with tracing off still passes the writer's context on to the consumers.
    return inSpan(`publish ${m.routingKey}`, publishSpan(m, traceContext), () =>
      publish(traceHeaders() ?? { traceparent: traceContext }),
    );
  }

  private async run(): Promise<void> {
    const idleMs = this.options.idleMs ?? 250;
    while (this.running) {
      let published = 0;
      try {
        published = await this.relayOnce();
      } catch (err) {
        this.logger.warn(
          { err: err instanceof Error ? err.message : String(err) },
          'outbox: relay pass failed',
        );
      }
      if (published === 0 && this.running) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, idleMs);
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    }
  }
}

/** The producer span of one row's publish, a child of the transaction that wrote the row. */
function publishSpan(m: ClaimedMessage, traceContext: string): SpanOptions {
  return {
    kind: SpanKind.PRODUCER,
    parent: contextFromHeaders({ traceparent: traceContext }),
    attributes: {
      'messaging.system': 'rabbitmq',
      'messaging.operation.type': 'publish',
      'messaging.destination.name': m.exchange,
      'messaging.rabbitmq.destination.routing_key': m.routingKey,
      'messaging.message.id': m.messageId,
    },
  };
}

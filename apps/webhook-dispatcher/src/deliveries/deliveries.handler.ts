import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import {
  ContractViolation,
  EVENT_BATCH_CONTENT_TYPE,
  EVENT_TYPES,
  parseEventBatch,
  parseServiceEvent,
  type EventBatchEntry,
  type ServiceEvent,
} from '@svc/contracts';
import {
  AmqpConnection,
  APP_CONFIG,
  APP_LOGGER,
  contextFromHeaders,
  inSpan,
  Permits,
  SpanKind,
  type InboundMessage,
} from '@svc/platform';
import type { Logger } from 'pino';
import type { WebhookDispatcherConfig } from '../config';
import { DeliveriesService } from './deliveries.service';
import { parseDeliveryMessage } from './delivery-message';
import { retryDelays } from './retry-policy';
import { declareWebhookTopology, DELIVERIES_QUEUE, EVENTS_QUEUE } from './webhook-queues';

/**
 * The dispatcher's two consumers, as thin as controllers: validate, one service call. A message is
 * acked when the call resolves; a throw nacks it (retried once, then parked and retried later). A
 * malformed message is logged and dropped: no retry can fix it. So is an event of a type that is
 * not a webhook (crew.events also carries internal events; the queue is bound to the webhook types
 * only, but a message published before a re-binding, or straight to the queue, may still arrive).
 *
 * A packed message (EVENT_BATCH_CONTENT_TYPE, see OUTBOX_EVENTS_PER_MESSAGE) is acked when all its
 * events are fanned out; a malformed or foreign event in it is dropped alone, and a throw nacks the
 * whole message (fanning out is idempotent per event, so the events already done are not repeated).
 * The prefetch bounds messages (fewer of them when the relays pack, OUTBOX_EVENTS_PER_MESSAGE);
 * WEBHOOK_CONCURRENCY permits bound the events worked on at once.
 */
@Injectable()
export class DeliveriesHandler implements OnModuleInit {
  constructor(
    private readonly amqp: AmqpConnection,
    private readonly deliveries: DeliveriesService,
    @Inject(APP_CONFIG)
    private readonly config: Pick<
      WebhookDispatcherConfig,
      'WEBHOOK_CONCURRENCY' | 'OUTBOX_EVENTS_PER_MESSAGE'
    >,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {
    this.eventPermits = new Permits(config.WEBHOOK_CONCURRENCY);
  }

  private readonly eventPermits: Permits;

  async onModuleInit(): Promise<void> {
    await this.amqp.addTopology(declareWebhookTopology(retryDelays(this.deliveries.retryPolicy)));
    // Most of an attempt is waiting (partner, database, auth-server): many run at once, and the
    // database writes of those finishing together share a statement.
    const prefetch = this.config.WEBHOOK_CONCURRENCY;
    // Packs of events: enough messages to keep every permit busy and the next ones ready, not so
    // many that one replica holds a burst's packs while a replica KEDA just added finds none.
    const eventsPrefetch = Math.min(
      prefetch,
      Math.ceil((2 * prefetch) / this.config.OUTBOX_EVENTS_PER_MESSAGE),
    );
    await this.amqp.consume(
      EVENTS_QUEUE,
      (m) =>
        m.properties.contentType === EVENT_BATCH_CONTENT_TYPE
          ? this.onEventBatch(m)
          : consumed(EVENTS_QUEUE, m, () => this.onEvent(m)),
      { prefetch: eventsPrefetch },
    );
    await this.amqp.consume(
      DELIVERIES_QUEUE,
      (m) => consumed(DELIVERIES_QUEUE, m, () => this.onDelivery(m)),
      { prefetch },
    );
  }

  private async onEvent(message: InboundMessage): Promise<void> {
    const event = this.read(message, (input) => this.webhookEvent(message, input));
    if (event) await this.eventPermits.run(() => this.deliveries.fanOut(event));
  }

  /** Each event of a packed message in a span of the trace that wrote it, as if it came alone. */
  private async onEventBatch(message: InboundMessage): Promise<void> {
    const entries = this.read(message, parseEventBatch);
    if (!entries) return;
    const results = await Promise.allSettled(
      entries.map((entry) => {
        const event = this.readEntry(message, entry);
        return event
          ? this.eventPermits.run(() =>
              consumedEntry(entry, entries.length, () => this.deliveries.fanOut(event)),
            )
          : undefined;
      }),
    );
    // Every event settled first: a redelivery must not race fan-outs still running.
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  private webhookEvent(message: InboundMessage, input: unknown): ServiceEvent | undefined {
    const type = (input as { type?: unknown } | null)?.type;
    return typeof type === 'string' && !(EVENT_TYPES as readonly string[]).includes(type)
      ? this.ignore(message, type)
      : parseServiceEvent(input);
  }

  private readEntry(message: InboundMessage, entry: EventBatchEntry): ServiceEvent | undefined {
    try {
      return this.webhookEvent(message, entry.payload);
    } catch (err) {
      if (!(err instanceof ContractViolation)) throw err;
      this.logger.warn(
        { err: err.message, routing_key: message.routingKey, message_id: entry.message_id },
        'malformed event of a packed message dropped',
      );
      return undefined;
    }
  }

  private async onDelivery(message: InboundMessage): Promise<void> {
    const delivery = this.read(message, parseDeliveryMessage);
    if (delivery) await this.deliveries.attempt(delivery);
  }

  private ignore(message: InboundMessage, type: string): undefined {
    this.logger.info(
      { event_type: type, routing_key: message.routingKey, message_id: message.properties.messageId },
      'not a webhook event type: acked and ignored',
    );
    return undefined;
  }

  private read<T>(message: InboundMessage, parse: (input: unknown) => T): T | undefined {
    try {
      return parse(JSON.parse(message.content.toString('utf8')));
    } catch (err) {
      if (!(err instanceof ContractViolation) && !(err instanceof SyntaxError)) throw err;
      this.logger.warn(
        { err: err.message, routing_key: message.routingKey, message_id: message.properties.messageId },
        'malformed message dropped',
      );
      return undefined;
    }
  }
}

/** One event of a packed message, in a span of the trace whose transaction wrote it. */
function consumedEntry(entry: EventBatchEntry, events: number, handle: () => Promise<void>): Promise<void> {
  return inSpan(
    `process ${EVENTS_QUEUE}`,
    {
      kind: SpanKind.CONSUMER,
      parent: contextFromHeaders(entry.traceparent ? { traceparent: entry.traceparent } : undefined),
      attributes: {
        'messaging.system': 'rabbitmq',
        'messaging.operation.type': 'process',
        'messaging.destination.name': EVENTS_QUEUE,
        'messaging.message.id': entry.message_id,
        'messaging.batch.message_count': events,
      },
    },
    handle,
  );
}

/**
 * Handles a message in a span of the trace its publisher started (the record change behind the
 * event, or the attempt behind a retry), so every attempt of a delivery joins that trace.
 */
function consumed(queue: string, message: InboundMessage, handle: () => Promise<void>): Promise<void> {
  return inSpan(
    `process ${queue}`,
    {
      kind: SpanKind.CONSUMER,
      parent: contextFromHeaders(message.properties.headers),
      attributes: {
        'messaging.system': 'rabbitmq',
        'messaging.operation.type': 'process',
        'messaging.destination.name': queue,
        'messaging.message.id': message.properties.messageId as string | undefined,
      },
    },
    handle,
  );
}

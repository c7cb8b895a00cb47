import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import {
  ContractViolation,
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
 * malformed message is logged and dropped: no retry can fix it.
 *
 * Every message of EVENTS_QUEUE is a pack of events (EVENT_BATCH_CONTENT_TYPE, as the outbox relays
 * publish them), acked when all its events are fanned out; a malformed event in it is dropped alone,
 * and so is one of a type that is not a webhook (crew.events also carries internal events; the
 * queue is bound to the webhook types only, but a message published before a re-binding, or
 * straight to the queue, may still arrive). A throw nacks the whole message (fanning out is
 * idempotent per event, so the events already done are not repeated). The prefetch bounds
 * messages; WEBHOOK_CONCURRENCY permits bound the events worked on at once.
 */
@Injectable()
export class DeliveriesHandler implements OnModuleInit {
  constructor(
    private readonly amqp: AmqpConnection,
    private readonly deliveries: DeliveriesService,
    @Inject(APP_CONFIG)
    private readonly config: Pick<WebhookDispatcherConfig, 'WEBHOOK_CONCURRENCY'>,
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
    // A message per permit on both queues. Under a trickle of events each pack holds one, and its
    // message stays unacked while its fan-out waits (up to a second for a partner's slot): fewer
    // messages than permits would let one partner whose endpoint hangs hold them all.
    await this.amqp.consume(EVENTS_QUEUE, (m) => this.onEvents(m), { prefetch });
    await this.amqp.consume(DELIVERIES_QUEUE, (m) => consumed(m, () => this.onDelivery(m)), { prefetch });
  }

  /** Each event of a pack in a span of the trace that wrote it, as if it came alone. */
  private async onEvents(message: InboundMessage): Promise<void> {
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

  private readEntry(message: InboundMessage, entry: EventBatchEntry): ServiceEvent | undefined {
    const type = (entry.payload as { type?: unknown }).type;
    if (typeof type === 'string' && !(EVENT_TYPES as readonly string[]).includes(type)) {
      this.logger.info(
        { event_type: type, routing_key: message.routingKey, message_id: entry.message_id },
        'not a webhook event type: acked and ignored',
      );
      return undefined;
    }
    try {
      return parseServiceEvent(entry.payload);
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

/** One event of a pack, in a span of the trace whose transaction wrote it. */
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
 * Handles an attempt's message in a span of the trace its publisher started (the event's fan-out,
 * or the attempt behind a retry), so every attempt of a delivery joins the record change's trace.
 */
function consumed(message: InboundMessage, handle: () => Promise<void>): Promise<void> {
  return inSpan(
    `process ${DELIVERIES_QUEUE}`,
    {
      kind: SpanKind.CONSUMER,
      parent: contextFromHeaders(message.properties.headers),
      attributes: {
        'messaging.system': 'rabbitmq',
        'messaging.operation.type': 'process',
        'messaging.destination.name': DELIVERIES_QUEUE,
        'messaging.message.id': message.properties.messageId as string | undefined,
      },
    },
    handle,
  );
}

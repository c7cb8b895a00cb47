import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { ContractViolation, EVENT_TYPES, parseServiceEvent } from '@svc/contracts';
import {
  AmqpConnection,
  APP_CONFIG,
  APP_LOGGER,
  contextFromHeaders,
  inSpan,
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
 */
@Injectable()
export class DeliveriesHandler implements OnModuleInit {
  constructor(
    private readonly amqp: AmqpConnection,
    private readonly deliveries: DeliveriesService,
    @Inject(APP_CONFIG) private readonly config: Pick<WebhookDispatcherConfig, 'WEBHOOK_CONCURRENCY'>,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.amqp.addTopology(declareWebhookTopology(retryDelays(this.deliveries.retryPolicy)));
    // Most of an attempt is waiting (partner, database, auth-server): many run at once, and the
    // database writes of those finishing together share a statement.
    const prefetch = this.config.WEBHOOK_CONCURRENCY;
    await this.amqp.consume(EVENTS_QUEUE, (m) => consumed(EVENTS_QUEUE, m, () => this.onEvent(m)), {
      prefetch,
    });
    await this.amqp.consume(
      DELIVERIES_QUEUE,
      (m) => consumed(DELIVERIES_QUEUE, m, () => this.onDelivery(m)),
      { prefetch },
    );
  }

  private async onEvent(message: InboundMessage): Promise<void> {
    const event = this.read(message, (input) => {
      const type = (input as { type?: unknown } | null)?.type;
      return typeof type === 'string' && !(EVENT_TYPES as readonly string[]).includes(type)
        ? this.ignore(message, type)
        : parseServiceEvent(input);
    });
    if (event) await this.deliveries.fanOut(event);
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

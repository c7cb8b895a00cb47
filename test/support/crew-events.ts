import {
  CREW_EVENTS_EXCHANGE,
  EVENT_BATCH_CONTENT_TYPE,
  parseEventBatch,
  type ServiceEvent,
} from '@svc/contracts';
import * as amqp from 'amqplib';
import type { Pool } from 'pg';
import { eventually } from './services';

/** A row of crew-api's outbox, as the relay will publish it. */
export interface OutboxRow {
  readonly message_id: string;
  readonly exchange: string;
  readonly routing_key: string;
  readonly payload: ServiceEvent;
}

/** The outbox rows of one member's events, oldest first. */
export async function outboxEvents(db: Pool, userId: string): Promise<OutboxRow[]> {
  const { rows } = await db.query<OutboxRow>(
    `SELECT message_id, exchange, routing_key, payload FROM crew.outbox_messages
      WHERE payload->>'user_id' = $1 ORDER BY id`,
    [userId],
  );
  return rows;
}

export interface PublishedEvent {
  readonly routingKey: string;
  readonly messageId: string;
  readonly body: ServiceEvent;
}

/**
 * A queue of this test bound to every routing key of `crew.events`: what the outbox relay
 * actually published, as a consumer (the webhook dispatcher) will receive it; the events of a
 * packed message one by one, under their own message ids.
 */
export class CrewEventsListener {
  private readonly received: PublishedEvent[] = [];

  private constructor(private readonly connection: amqp.ChannelModel) {}

  static async start(amqpUrl: string): Promise<CrewEventsListener> {
    const connection = await amqp.connect(amqpUrl);
    const listener = new CrewEventsListener(connection);
    const channel = await connection.createChannel();
    await channel.assertExchange(CREW_EVENTS_EXCHANGE, 'topic', { durable: true });
    const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
    await channel.bindQueue(queue, CREW_EVENTS_EXCHANGE, '#');
    await channel.consume(
      queue,
      (msg) => {
        if (!msg) return;
        const content: unknown = JSON.parse(msg.content.toString('utf8'));
        const events =
          msg.properties.contentType === EVENT_BATCH_CONTENT_TYPE
            ? parseEventBatch(content).map((e) => ({ messageId: e.message_id, body: e.payload }))
            : [{ messageId: String(msg.properties.messageId), body: content }];
        for (const { messageId, body } of events) {
          listener.received.push({
            routingKey: msg.fields.routingKey,
            messageId,
            body: body as ServiceEvent,
          });
        }
      },
      { noAck: true },
    );
    return listener;
  }

  /** Waits for the message with this id (the event id). */
  published(messageId: string, timeoutMs = 10_000): Promise<PublishedEvent> {
    return eventually(async () => this.received.find((m) => m.messageId === messageId), timeoutMs, 50);
  }

  of(userId: string): PublishedEvent[] {
    return this.received.filter((m) => m.body.user_id === userId);
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}

import { Injectable } from '@nestjs/common';
import { AmqpConnection, newId } from '@svc/platform';
import { DeliveriesRepository, type LoggedDelivery } from '../deliveries/deliveries.repository';
import { enqueueAttempt } from '../deliveries/delivery-message';
import { DELIVERIES_QUEUE } from '../deliveries/webhook-queues';
import { DeliveryLogException } from './delivery-log.exception';
import { unknownDelivery } from './delivery-log.service';

/** Sends a finished delivery again, for partner support (`deliveries redeliver`). */
@Injectable()
export class RedeliveryService {
  constructor(
    private readonly deliveries: DeliveriesRepository,
    private readonly amqp: AmqpConnection,
  ) {}

  /**
   * A fresh attempt series for a finished delivery: a new delivery (new id, attempts from 1) with
   * the same event id and body bytes, queued for its first attempt now. The partner sees the same
   * event again, as with any at-least-once duplicate. A delivery still being retried is left to
   * its own series.
   */
  async redeliver(deliveryId: string): Promise<LoggedDelivery> {
    const source = await this.deliveries.findLogged(deliveryId);
    if (!source) throw unknownDelivery(deliveryId);
    if (source.status === 'pending') {
      throw new DeliveryLogException(
        'still_pending',
        `${deliveryId} is still pending (${source.attempts} attempt(s) so far` +
          `${source.nextAttemptAt ? `, next at ${source.nextAttemptAt.toISOString()}` : ''}); ` +
          'redeliver it once it is delivered or failed',
      );
    }
    await this.assertQueueExists();
    const redelivery = await this.deliveries.createRedelivery(deliveryId, newId('dlv', 16));
    if (!redelivery) throw unknownDelivery(deliveryId);
    try {
      await enqueueAttempt(this.amqp, DELIVERIES_QUEUE, { delivery_id: redelivery.deliveryId, attempt: 1 });
    } catch (err) {
      // Without its message nothing would ever attempt it: take it back.
      await this.deliveries.deleteUnattempted(redelivery.deliveryId);
      throw new DeliveryLogException(
        'broker_unavailable',
        `RabbitMQ did not take the redelivery: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    return redelivery;
  }

  /** A message sent to a queue that does not exist is dropped without a word; check first. */
  private async assertQueueExists(): Promise<void> {
    try {
      await this.amqp.withChannel((channel) => channel.checkQueue(DELIVERIES_QUEUE));
    } catch (err) {
      const missing = err instanceof Error && /NOT_FOUND/.test(err.message);
      throw new DeliveryLogException(
        missing ? 'queues_missing' : 'broker_unavailable',
        missing
          ? `queue ${DELIVERIES_QUEUE} does not exist: start webhook-dispatcher once against this broker`
          : `RabbitMQ is not reachable: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
}

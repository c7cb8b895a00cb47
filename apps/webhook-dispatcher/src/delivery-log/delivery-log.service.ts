import { Injectable } from '@nestjs/common';
import {
  DeliveriesRepository,
  type DeliveryStatus,
  type LoggedAttempt,
  type LoggedDelivery,
} from '../deliveries/deliveries.repository';
import type { EndpointStatus } from '../deliveries/delivery.entity';
import {
  PartnerWebhooksRepository,
  type EndpointState,
} from '../partner-webhooks/partner-webhooks.repository';
import { DeliveryLogException } from './delivery-log.exception';

/** The delivery log as operators and partner support read it. */
@Injectable()
export class DeliveryLogService {
  constructor(
    private readonly deliveries: DeliveriesRepository,
    private readonly endpoints: PartnerWebhooksRepository,
  ) {}

  /** The partner's endpoint as the partner sees it (GET /v1/partners/webhooks/endpoint), without the URL. */
  endpoint(clientId: string): Promise<EndpointState> {
    return this.endpoints.endpoint(clientId);
  }

  /**
   * An operator's switch: disabling records `operator` as the reason; enabling skips the test the
   * partner's own enable sends (the operator has checked the endpoint some other way).
   */
  async setEndpoint(clientId: string, status: EndpointStatus): Promise<EndpointState> {
    await this.endpoints.setStatus(clientId, status, 'operator');
    return this.endpoints.endpoint(clientId);
  }

  list(clientId: string, status: DeliveryStatus | undefined, limit: number): Promise<LoggedDelivery[]> {
    return this.deliveries.listForClient(clientId, status, limit);
  }

  /**
   * A fresh attempt series for a finished delivery (`deliveries redeliver`): a new delivery (new
   * id, attempts from 1) with the same event id and body bytes. Its row is its place in the backlog
   * (DeliveryBacklog), which runs it in its partner's turn, as a partner's own redelivery. A
   * delivery still being retried is left to its own series.
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
    const [redeliveryId] = await this.endpoints.repeat([deliveryId]);
    const redelivery = await this.deliveries.findLogged(redeliveryId);
    if (!redelivery) throw unknownDelivery(deliveryId);
    return redelivery;
  }

  async show(deliveryId: string): Promise<{ delivery: LoggedDelivery; attempts: LoggedAttempt[] }> {
    const delivery = await this.deliveries.findLogged(deliveryId);
    if (!delivery) throw unknownDelivery(deliveryId);
    return { delivery, attempts: await this.deliveries.attemptsOf(deliveryId) };
  }
}

function unknownDelivery(deliveryId: string): DeliveryLogException {
  return new DeliveryLogException('unknown_delivery', `no delivery ${deliveryId}`);
}

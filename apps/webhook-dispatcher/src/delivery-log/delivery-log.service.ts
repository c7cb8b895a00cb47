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

export interface DeliveryDetail {
  readonly delivery: LoggedDelivery;
  readonly attempts: LoggedAttempt[];
}

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

  async show(deliveryId: string): Promise<DeliveryDetail> {
    const delivery = await this.deliveries.findLogged(deliveryId);
    if (!delivery) throw unknownDelivery(deliveryId);
    return { delivery, attempts: await this.deliveries.attemptsOf(deliveryId) };
  }
}

export function unknownDelivery(deliveryId: string): DeliveryLogException {
  return new DeliveryLogException('unknown_delivery', `no delivery ${deliveryId}`);
}

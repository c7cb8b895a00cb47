import { Injectable } from '@nestjs/common';
import {
  DeliveriesRepository,
  type DeliveryStatus,
  type LoggedAttempt,
  type LoggedDelivery,
} from '../deliveries/deliveries.repository';
import { DeliveryLogException } from './delivery-log.exception';

export interface DeliveryDetail {
  readonly delivery: LoggedDelivery;
  readonly attempts: LoggedAttempt[];
}

/** The delivery log as operators and partner support read it. */
@Injectable()
export class DeliveryLogService {
  constructor(private readonly deliveries: DeliveriesRepository) {}

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

import { Module } from '@nestjs/common';
import { DeliveriesHandler } from './deliveries.handler';
import { DeliveriesRepository } from './deliveries.repository';
import { DeliveriesService } from './deliveries.service';
import { DeliveryLogPruner } from './delivery-log-pruner';
import { WebhookSender } from './webhook-sender';

@Module({
  providers: [DeliveriesRepository, DeliveriesService, WebhookSender, DeliveriesHandler, DeliveryLogPruner],
})
export class DeliveriesModule {}

import { Module } from '@nestjs/common';
import { DeliveriesHandler } from './deliveries.handler';
import { DeliveriesRepository } from './deliveries.repository';
import { DeliveriesService } from './deliveries.service';
import { DeliveryBacklog } from './delivery-backlog';
import { WebhookSender } from './webhook-sender';

@Module({
  providers: [DeliveriesRepository, DeliveriesService, WebhookSender, DeliveriesHandler, DeliveryBacklog],
  // The partners' self-service reads the same log and sends its endpoint test through the same pool.
  exports: [DeliveriesRepository, WebhookSender],
})
export class DeliveriesModule {}

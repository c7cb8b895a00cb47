import { Module } from '@nestjs/common';
import { DeliveriesHandler } from './deliveries.handler';
import { DeliveriesRepository } from './deliveries.repository';
import { DeliveriesService } from './deliveries.service';
import { WebhookSender } from './webhook-sender';

@Module({
  providers: [DeliveriesRepository, DeliveriesService, WebhookSender, DeliveriesHandler],
})
export class DeliveriesModule {}

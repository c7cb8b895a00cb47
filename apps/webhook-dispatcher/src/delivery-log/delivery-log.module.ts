import { Module } from '@nestjs/common';
import { DeliveriesRepository } from '../deliveries/deliveries.repository';
import { PartnerWebhooksRepository } from '../partner-webhooks/partner-webhooks.repository';
import { DeliveryLogService } from './delivery-log.service';

/** The delivery log for the operators' CLI: PostgreSQL only, no consumers, nothing in the background. */
@Module({
  providers: [DeliveriesRepository, PartnerWebhooksRepository, DeliveryLogService],
})
export class DeliveryLogModule {}

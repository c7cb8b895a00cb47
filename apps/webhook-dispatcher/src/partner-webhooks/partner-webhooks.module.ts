import { Module } from '@nestjs/common';
import { DeliveriesModule } from '../deliveries/deliveries.module';
import { ActivePartnerGuard } from '@svc/security';
import { PartnerWebhooksController } from './partner-webhooks.controller';
import { PartnerWebhooksRepository } from './partner-webhooks.repository';
import { PartnerWebhooksService } from './partner-webhooks.service';

/** `/v1/partners/webhooks/*`: partners' self-service over the delivery log this app keeps. */
@Module({
  imports: [DeliveriesModule],
  controllers: [PartnerWebhooksController],
  providers: [PartnerWebhooksRepository, PartnerWebhooksService, ActivePartnerGuard],
  exports: [PartnerWebhooksService],
})
export class PartnerWebhooksModule {}

import { Module } from '@nestjs/common';
import { PartnerWebhooksModule } from '../partner-webhooks/partner-webhooks.module';
import { PartnerPortalHandler } from './partner-portal.handler';
import { PartnerPortalRepository } from './partner-portal.repository';
import { PartnerPortalService } from './partner-portal.service';

/** The partner portal's webhook pages and actions, answered over RPC (`webhooks.rpc`). */
@Module({
  imports: [PartnerWebhooksModule],
  controllers: [PartnerPortalHandler],
  providers: [PartnerPortalRepository, PartnerPortalService],
  exports: [PartnerPortalRepository],
})
export class PartnerPortalModule {}

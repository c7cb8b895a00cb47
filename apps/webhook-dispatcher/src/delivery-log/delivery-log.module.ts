import { Module, type DynamicModule } from '@nestjs/common';
import { DeliveriesRepository } from '../deliveries/deliveries.repository';
import { PartnerWebhooksRepository } from '../partner-webhooks/partner-webhooks.repository';
import { DeliveryLogService } from './delivery-log.service';
import { RedeliveryService } from './redelivery.service';

/**
 * The delivery log for the operators' CLI: no consumers, nothing runs in the background. Reading
 * needs only PostgreSQL; redelivering also needs RabbitMQ (MessagingModule), so it is opt-in.
 */
@Module({})
export class DeliveryLogModule {
  static forCli(options: { readonly redelivery: boolean }): DynamicModule {
    const providers = [
      DeliveriesRepository,
      PartnerWebhooksRepository,
      DeliveryLogService,
      ...(options.redelivery ? [RedeliveryService] : []),
    ];
    return { module: DeliveryLogModule, providers, exports: providers };
  }
}

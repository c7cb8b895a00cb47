import { Module } from '@nestjs/common';
import { APP_CONFIG, APP_LOGGER, RetentionJob } from '@svc/platform';
import type { Logger } from 'pino';
import type { WebhookDispatcherConfig } from '../config';
import { DeliveriesModule } from '../deliveries/deliveries.module';
import { DeliveriesRepository } from '../deliveries/deliveries.repository';
import { PartnerPortalModule } from '../partner-portal/partner-portal.module';
import { PartnerPortalRepository } from '../partner-portal/partner-portal.repository';

/** What the dispatcher prunes, and how old it must be. */
export const dispatcherRetention = (
  deliveries: DeliveriesRepository,
  portal: PartnerPortalRepository,
  config: Pick<WebhookDispatcherConfig, 'WEBHOOK_LOG_RETENTION_DAYS' | 'PORTAL_ACTIONS_RETENTION_DAYS'>,
  logger: Logger,
) =>
  new RetentionJob('webhook-dispatcher', logger, {
    // A row per event and partner, and one per attempt: finished ones past the log's retention
    // (0 keeps the log whole); pending ones are never touched.
    deliveries: (n) =>
      config.WEBHOOK_LOG_RETENTION_DAYS > 0
        ? deliveries.pruneFinished(config.WEBHOOK_LOG_RETENTION_DAYS, n)
        : Promise.resolve(0),
    // The endpoints' hourly attempt counts, once no health reads them.
    endpoint_hours: () => deliveries.pruneEndpointHours(),
    // A row per portal click, refusals included.
    portal_actions: (n) => portal.deleteOlderThan(config.PORTAL_ACTIONS_RETENTION_DAYS, n),
  });

/** Housekeeping of the dispatcher's tables: the delivery log and the portal's record of actions. */
@Module({
  imports: [DeliveriesModule, PartnerPortalModule],
  providers: [
    {
      provide: RetentionJob,
      inject: [DeliveriesRepository, PartnerPortalRepository, APP_CONFIG, APP_LOGGER],
      useFactory: dispatcherRetention,
    },
  ],
})
export class RetentionModule {}

import { APP_SCHEMAS, RPC_QUEUES } from '@svc/contracts';
import type { AppDefinition } from '@svc/platform';
import { SecurityModule } from '@svc/security';
import { WEBHOOK_DISPATCHER_CONFIG } from './config';
import { DeliveriesModule } from './deliveries/deliveries.module';
import { deliveriesCommand } from './delivery-log/delivery-log.cli';
import { WEBHOOK_DISPATCHER_MIGRATIONS } from './migrations';
import { PartnerPortalModule } from './partner-portal/partner-portal.module';
import { partnerWebhooksProblem } from './partner-webhooks/partner-webhooks-problem.mapper';
import { PartnerWebhooksModule } from './partner-webhooks/partner-webhooks.module';
import { RetentionModule } from './retention/retention.module';

/**
 * webhook-dispatcher: delivers webhooks (a worker on RabbitMQ), and serves partners their own
 * delivery log and endpoint (`/v1/partners/webhooks/*`, HTTP Basic checked with auth-server and the
 * shared per-partner rate limits), since the log lives in its database; its RPC queue answers the
 * partner portal (consent-ui) with the same rules.
 */
export const WEBHOOK_DISPATCHER: AppDefinition<typeof WEBHOOK_DISPATCHER_CONFIG> = {
  name: 'webhook-dispatcher',
  config: WEBHOOK_DISPATCHER_CONFIG,
  database: {
    schema: APP_SCHEMAS['webhook-dispatcher'],
    migrations: WEBHOOK_DISPATCHER_MIGRATIONS,
  },
  redis: true,
  rpcQueue: RPC_QUEUES.webhookDispatcher,
  mapDomainError: partnerWebhooksProblem,
  commands: { deliveries: deliveriesCommand },
  module: class WebhookDispatcherModule {},
  modules: [
    SecurityModule.forRoot({ partners: true }),
    DeliveriesModule,
    PartnerWebhooksModule,
    PartnerPortalModule,
    RetentionModule,
  ],
};

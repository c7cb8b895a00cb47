import { APP_SCHEMAS } from '@svc/contracts';
import type { AppDefinition } from '@svc/platform';
import { WEBHOOK_DISPATCHER_CONFIG } from './config';
import { DeliveriesModule } from './deliveries/deliveries.module';
import { deliveriesCommand } from './delivery-log/delivery-log.cli';
import { WEBHOOK_DISPATCHER_MIGRATIONS } from './migrations';

/** webhook-dispatcher: a worker; its HTTP port serves only the probes. */
export const WEBHOOK_DISPATCHER: AppDefinition<typeof WEBHOOK_DISPATCHER_CONFIG> = {
  name: 'webhook-dispatcher',
  config: WEBHOOK_DISPATCHER_CONFIG,
  database: {
    schema: APP_SCHEMAS['webhook-dispatcher'],
    migrations: WEBHOOK_DISPATCHER_MIGRATIONS,
  },
  commands: { deliveries: deliveriesCommand },
  module: class WebhookDispatcherModule {},
  modules: [DeliveriesModule],
};

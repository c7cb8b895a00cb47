import { APP_SCHEMAS, CREW_EVENTS_EXCHANGE, RPC_QUEUES } from '@svc/contracts';
import { EventExchangeModule, OutboxModule, type AppDefinition } from '@svc/platform';
import { SecurityModule } from '@svc/security';
import { AccessHistoryModule } from './access-history/access-history.module';
import { CREW_API_CONFIG } from './config';
import { recordsProblem } from './http/records-problem.mapper';
import { MembersModule } from './members/members.module';
import { MemberExportModule } from './member-export/member-export.module';
import { MembershipsModule } from './memberships/memberships.module';
import { CREW_API_MIGRATIONS } from './migrations';
import { SeaTimeModule } from './sea-time/sea-time.module';
import { WebhooksModule } from './webhooks/webhooks.module';
import { seedSandbox } from './seed/sandbox-seed';
import { VesselsModule } from './vessels/vessels.module';

/** crew-api: crew records, the crew-data API (`/v1/me*`), the internal records API and the record events. */
export const CREW_API: AppDefinition<typeof CREW_API_CONFIG> = {
  name: 'crew-api',
  config: CREW_API_CONFIG,
  database: {
    schema: APP_SCHEMAS['crew-api'],
    migrations: CREW_API_MIGRATIONS,
  },
  redis: true,
  rpcQueue: RPC_QUEUES.crewApi,
  mapDomainError: recordsProblem,
  seed: seedSandbox,
  module: class CrewApiModule {},
  modules: [
    OutboxModule.forRoot(),
    EventExchangeModule.forRoot(CREW_EVENTS_EXCHANGE),
    SecurityModule.forRoot(),
    AccessHistoryModule,
    MembersModule,
    MembershipsModule,
    SeaTimeModule,
    VesselsModule,
    WebhooksModule,
    MemberExportModule,
  ],
};

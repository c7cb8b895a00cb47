import { APP_SCHEMAS, CREW_EVENTS_EXCHANGE } from '@svc/contracts';
import {
  DatabaseModule,
  EventExchangeModule,
  MessagingModule,
  OutboxMessageEntity,
  OutboxModule,
  PlatformModule,
  RedisModule,
  RpcModule,
  type AppDefinition,
} from '@svc/platform';
import { CREW_API_CONFIG } from './config';
import { CREW_API_MIGRATIONS } from './migrations';

const database = {
  schema: APP_SCHEMAS['crew-api'],
  entities: [OutboxMessageEntity],
  migrations: CREW_API_MIGRATIONS,
};

/** crew-api: crew records, the crew-data API, the internal records API and their outbox. */
export const CREW_API: AppDefinition<typeof CREW_API_CONFIG> = {
  name: 'crew-api',
  config: CREW_API_CONFIG,
  database,
  rootModule: (platform) => ({
    module: class CrewApiModule {},
    imports: [
      PlatformModule.forRoot(platform),
      DatabaseModule.forRoot(database),
      RedisModule.forRoot(),
      MessagingModule.forRoot(),
      RpcModule,
      OutboxModule.forRoot(),
      EventExchangeModule.forRoot(CREW_EVENTS_EXCHANGE),
    ],
  }),
};

import { APP_SCHEMAS } from '@svc/contracts';
import {
  DatabaseModule,
  MessagingModule,
  PlatformModule,
  RedisModule,
  RpcModule,
  type AppDefinition,
} from '@svc/platform';
import { SPONSORSHIP_API_MIGRATIONS } from './migrations';
import { SPONSORSHIP_API_CONFIG } from './config';

const database = {
  schema: APP_SCHEMAS['sponsorship-api'],
  entities: [],
  migrations: SPONSORSHIP_API_MIGRATIONS,
};

/** sponsorship-api: partners' sponsored seats, behind HTTP Basic. */
export const SPONSORSHIP_API: AppDefinition<typeof SPONSORSHIP_API_CONFIG> = {
  name: 'sponsorship-api',
  config: SPONSORSHIP_API_CONFIG,
  database,
  rootModule: (platform) => ({
    module: class SponsorshipApiModule {},
    imports: [
      PlatformModule.forRoot(platform),
      DatabaseModule.forRoot(database),
      RedisModule.forRoot(),
      MessagingModule.forRoot(),
      RpcModule,
    ],
  }),
};

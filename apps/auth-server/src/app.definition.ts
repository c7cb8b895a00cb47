import { APP_SCHEMAS, RPC_QUEUES } from '@svc/contracts';
import {
  DatabaseModule,
  MessagingModule,
  PlatformModule,
  RedisModule,
  type AppDefinition,
} from '@svc/platform';
import { AUTH_SERVER_CONFIG } from './config';
import { AUTH_SERVER_MIGRATIONS } from './migrations';
import { SystemModule } from './system/system.module';

const database = { schema: APP_SCHEMAS['auth-server'], entities: [], migrations: AUTH_SERVER_MIGRATIONS };

/** auth-server: partners, credentials, consents, codes and tokens; answers the other apps over RPC. */
export const AUTH_SERVER: AppDefinition<typeof AUTH_SERVER_CONFIG> = {
  name: 'auth-server',
  config: AUTH_SERVER_CONFIG,
  database,
  rpcQueue: RPC_QUEUES.authServer,
  formBodies: true,
  rootModule: (platform) => ({
    module: class AuthServerModule {},
    imports: [
      PlatformModule.forRoot(platform),
      DatabaseModule.forRoot(database),
      RedisModule.forRoot(),
      MessagingModule.forRoot(),
      SystemModule,
    ],
  }),
};

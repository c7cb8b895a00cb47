import { APP_SCHEMAS, CREW_EVENTS_EXCHANGE, RPC_QUEUES } from '@svc/contracts';
import {
  ApiProblem,
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
import { AUTH_SERVER_CONFIG } from './config';
import { AUTH_SERVER_MIGRATIONS } from './migrations';
import { oauthErrorRenderer } from './oauth/oauth-error.renderer';
import { OAuthException, oauthProblemCode } from './oauth/oauth.exception';
import { OAuthModule } from './oauth/oauth.module';
import { RetentionModule } from './retention/retention.module';
import { partnersCommand } from './partners/partners.cli';
import { seedSandbox } from './seed';
import { SystemModule } from './system/system.module';

const database = {
  schema: APP_SCHEMAS['auth-server'],
  // The platform's outbox repository still writes through TypeORM's entity API.
  entities: [OutboxMessageEntity],
  migrations: AUTH_SERVER_MIGRATIONS,
};

/** auth-server: partners, credentials, consents, codes and tokens; answers the other apps over RPC. */
export const AUTH_SERVER: AppDefinition<typeof AUTH_SERVER_CONFIG> = {
  name: 'auth-server',
  config: AUTH_SERVER_CONFIG,
  database,
  rpcQueue: RPC_QUEUES.authServer,
  formBodies: true,
  renderError: oauthErrorRenderer,
  mapDomainError: (error) =>
    error instanceof OAuthException
      ? new ApiProblem(oauthProblemCode(error.code), error.description)
      : undefined,
  seed: seedSandbox,
  commands: { partners: partnersCommand },
  rootModule: (platform) => ({
    module: class AuthServerModule {},
    imports: [
      PlatformModule.forRoot(platform),
      DatabaseModule.forRoot(database),
      RedisModule.forRoot(),
      MessagingModule.forRoot(),
      RpcModule,
      EventExchangeModule.forRoot(CREW_EVENTS_EXCHANGE),
      OutboxModule.forRoot(),
      SystemModule,
      OAuthModule,
      RetentionModule,
    ],
  }),
};

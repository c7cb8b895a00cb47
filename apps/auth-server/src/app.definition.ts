import { CREW_EVENTS_EXCHANGE, RPC_QUEUES } from '@svc/contracts';
import { EventExchangeModule, OutboxModule, type AppDefinition } from '@svc/platform';
import { AUTH_SERVER_CONFIG } from './config';
import { AccessHistoryModule } from './access-history/access-history.module';
import { AuthorizeModule } from './authorize/authorize.module';
import { ConsentsModule } from './consents/consents.module';
import { AUTH_SERVER_DATABASE } from './core-context';
import { MetadataModule } from './metadata/metadata.module';
import { oauthErrorRenderer, oauthProblem } from './oauth/oauth-error.renderer';
import { partnersCommand } from './partners/partners.cli';
import { PartnersModule } from './partners/partners.module';
import { PortalModule } from './portal/portal.module';
import { RetentionModule } from './retention/retention.module';
import { seedSandbox } from './seed';
import { SystemModule } from './system/system.module';
import { TOKENS_SECURITY, TokensModule } from './tokens/tokens.module';
import { UserinfoModule } from './userinfo/userinfo.module';
import { UsersModule } from './users/users.module';
import { WebhooksModule } from './webhooks/webhooks.module';

/** auth-server: partners, credentials, consents, codes and tokens; answers the other apps over RPC. */
export const AUTH_SERVER: AppDefinition<typeof AUTH_SERVER_CONFIG> = {
  name: 'auth-server',
  config: AUTH_SERVER_CONFIG,
  database: AUTH_SERVER_DATABASE,
  redis: true,
  rpcQueue: RPC_QUEUES.authServer,
  formBodies: true,
  renderError: oauthErrorRenderer,
  mapDomainError: oauthProblem,
  seed: seedSandbox,
  commands: { partners: partnersCommand },
  module: class AuthServerModule {},
  modules: [
    EventExchangeModule.forRoot(CREW_EVENTS_EXCHANGE),
    OutboxModule.forRoot(),
    TOKENS_SECURITY,
    SystemModule,
    AuthorizeModule,
    ConsentsModule,
    PartnersModule,
    PortalModule,
    TokensModule,
    UsersModule,
    UserinfoModule,
    MetadataModule,
    WebhooksModule,
    RetentionModule,
    AccessHistoryModule,
  ],
};

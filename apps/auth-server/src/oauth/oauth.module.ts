import { Module } from '@nestjs/common';
import { APP_CONFIG, OutboxRepository, type ConfigOf } from '@svc/platform';
import { IntrospectionCache, SecurityModule } from '@svc/security';
import { AuthorizationCodesRepository } from '../authorize/authorization-codes.repository';
import { AuthorizeHandler } from '../authorize/authorize.handler';
import { AuthorizeService } from '../authorize/authorize.service';
import type { AUTH_SERVER_CONFIG } from '../config';
import { ConsentsHandler } from '../consents/consents.handler';
import { ConnectedMembersHandler } from '../consents/connected-members.handler';
import { ConsentsRepository } from '../consents/consents.repository';
import { ConsentsService } from '../consents/consents.service';
import { PasswordHasher, SecretBox } from '../crypto/secrets';
import { MetadataController } from '../metadata/metadata.controller';
import { PartnerCredentialsHandler } from '../partners/partner-credentials.handler';
import { PartnersRepository } from '../partners/partners.repository';
import { PartnersService } from '../partners/partners.service';
import { IntrospectHandler } from '../tokens/introspect.handler';
import { LocalIntrospector } from '../tokens/local-introspector';
import { TokenPairsRepository } from '../tokens/token-pairs.repository';
import { TokenController } from '../tokens/token.controller';
import { TokensService } from '../tokens/tokens.service';
import { LoginHandler } from '../users/login.handler';
import { UsersRepository } from '../users/users.repository';
import { UsersService } from '../users/users.service';
import { SignInService } from '../users/sign-in.service';
import { SignInThrottle } from '../users/sign-in-throttle';
import { UserinfoController } from '../userinfo/userinfo.controller';
import { UserinfoService } from '../userinfo/userinfo.service';
import { WebhookRecipientsHandler } from '../webhooks/webhook-recipients.handler';
import { WebhookRecipientsRepository } from '../webhooks/webhook-recipients.repository';
import { WebhookRecipientsService } from '../webhooks/webhook-recipients.service';

const repositories = [
  PartnersRepository,
  UsersRepository,
  ConsentsRepository,
  AuthorizationCodesRepository,
  TokenPairsRepository,
  WebhookRecipientsRepository,
];
const services = [
  PartnersService,
  UsersService,
  SignInService,
  SignInThrottle,
  ConsentsService,
  AuthorizeService,
  TokensService,
  UserinfoService,
  WebhookRecipientsService,
];

/**
 * The token store's repositories and services, shared by the HTTP surface, the RPC handlers and
 * the CLI (which has no broker: the outbox relay runs in the serving app only).
 */
@Module({
  providers: [
    ...repositories,
    ...services,
    OutboxRepository,
    IntrospectionCache,
    {
      provide: SecretBox,
      inject: [APP_CONFIG],
      useFactory: (config: ConfigOf<typeof AUTH_SERVER_CONFIG>) =>
        new SecretBox(config.SECRETS_ENCRYPTION_KEY),
    },
    {
      // One per app: its hashing slots bound every password hash the app runs.
      provide: PasswordHasher,
      inject: [APP_CONFIG],
      useFactory: (config: ConfigOf<typeof AUTH_SERVER_CONFIG>) =>
        new PasswordHasher(config.PASSWORD_HASH_COST),
    },
  ],
  exports: [...services],
})
export class OAuthCoreModule {}

/** HTTP endpoints (RFC 6749, 7009, 8414, userinfo) and the RPC handlers other apps call. */
@Module({
  imports: [
    OAuthCoreModule,
    SecurityModule.forRoot({ introspector: LocalIntrospector, imports: [OAuthCoreModule] }),
  ],
  controllers: [
    TokenController,
    UserinfoController,
    MetadataController,
    AuthorizeHandler,
    ConsentsHandler,
    ConnectedMembersHandler,
    LoginHandler,
    PartnerCredentialsHandler,
    IntrospectHandler,
    WebhookRecipientsHandler,
  ],
})
export class OAuthModule {}

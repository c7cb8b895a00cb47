import type { INestApplicationContext } from '@nestjs/common';
import { APP_SCHEMAS } from '@svc/contracts';
import {
  DatabaseModule,
  PlatformModule,
  RedisModule,
  RouteIndex,
  withAppContext,
  type ConfigOf,
} from '@svc/platform';
import type { Logger } from 'pino';
import type { AUTH_SERVER_CONFIG } from './config';
import { AUTH_SERVER_MIGRATIONS } from './migrations';
import { PartnersModule } from './partners/partners.module';
import { TOKENS_SECURITY, TokensModule } from './tokens/tokens.module';
import { UsersModule } from './users/users.module';

export const AUTH_SERVER_DATABASE = {
  schema: APP_SCHEMAS['auth-server'],
  migrations: AUTH_SERVER_MIGRATIONS,
};

/** The services without HTTP or RPC, for the CLI (sandbox seed, partner onboarding). */
export async function withCoreContext<T>(
  config: ConfigOf<typeof AUTH_SERVER_CONFIG>,
  logger: Logger,
  work: (context: INestApplicationContext) => Promise<T>,
): Promise<T> {
  return withAppContext(
    [
      PlatformModule.forRoot({ app: 'auth-server', config, logger, routes: new RouteIndex() }),
      DatabaseModule.forRoot(AUTH_SERVER_DATABASE),
      RedisModule.forRoot(),
      TOKENS_SECURITY,
      PartnersModule,
      UsersModule,
      TokensModule,
    ],
    work,
  );
}

import {
  Global,
  Module,
  type DynamicModule,
  type ExistingProvider,
  type FactoryProvider,
  type ModuleMetadata,
  type Provider,
  type ValueProvider,
} from '@nestjs/common';
import { APP_CONFIG, APP_LOGGER, REDIS, type RedisClient } from '@svc/platform';
import type { Logger } from 'pino';
import { BasicAuthGuard, BasicStrategy } from './authentication/basic-auth.guard';
import { BearerAuthGuard, BearerStrategy, ScopeGuard } from './authentication/bearer-auth.guard';
import { FailedAuthLimiter, failedAuthConfigOf } from './limits/failed-auth-limiter';
import { IntrospectionCache } from './authentication/introspection-cache';
import { Introspector, RpcIntrospector } from './authentication/introspector';
import { PartnerProgramGuard } from './authentication/partner.guard';
import { PartnerVerifier, RpcPartnerVerifier } from './authentication/partner-verifier';
import { rateLimitConfigOf, rateLimitPolicy } from './limits/rate-limit.config';
import { RateLimitGuard, RateLimiter, RedisRateLimiter, UnconfiguredRateLimiter } from './limits/rate-limit';
import { TokenAuthenticator } from './authentication/token-authenticator';

export interface SecurityModuleOptions {
  /** HTTP Basic for the partner endpoints (sponsorship-api): credentials checked with auth-server. */
  readonly partners?: boolean;
  /** Default: RpcPartnerVerifier (asks auth-server); auth-server itself checks its own store. */
  readonly partnerVerifier?: Omit<ExistingProvider<PartnerVerifier>, 'provide'>;
  /** Another of the app's providers, or a value. Default: RpcIntrospector (over RPC; needs RpcModule). */
  readonly introspector?:
    Omit<ExistingProvider<Introspector>, 'provide'> | Omit<ValueProvider<Introspector>, 'provide'>;
  /** Modules the introspector's dependencies come from (auth-server's own token store). */
  readonly imports?: ModuleMetadata['imports'];
}

/** The shared Redis limiter, with the limits the app validated at start-up (RATE_LIMIT_CONFIG). */
const rateLimiterProvider: FactoryProvider<RateLimiter> = {
  provide: RateLimiter,
  inject: [REDIS, APP_CONFIG],
  useFactory: (redis: RedisClient, appConfig: object) => {
    const config = rateLimitConfigOf(appConfig);
    return config ? new RedisRateLimiter(redis, rateLimitPolicy(config)) : new UnconfiguredRateLimiter();
  },
};

/** On the rate limiter's Redis connection: its keys never belong in an evictable cache. */
const failedAuthLimiterProvider: FactoryProvider<FailedAuthLimiter> = {
  provide: FailedAuthLimiter,
  inject: [REDIS, APP_CONFIG, APP_LOGGER],
  useFactory: (redis: RedisClient, appConfig: object, logger: Logger) =>
    new FailedAuthLimiter(redis, failedAuthConfigOf(appConfig), logger),
};

/**
 * Bearer authentication and the per-partner rate limits. Import once in the root module, next to
 * PlatformModule, RedisModule and (for the default introspector) RpcModule.
 */
@Global()
@Module({})
export class SecurityModule {
  static forRoot(options: SecurityModuleOptions = {}): DynamicModule {
    const providers: Provider[] = [
      { provide: Introspector, ...(options.introspector ?? { useClass: RpcIntrospector }) },
      IntrospectionCache,
      TokenAuthenticator,
      BearerStrategy,
      BearerAuthGuard,
      rateLimiterProvider,
      failedAuthLimiterProvider,
      RateLimitGuard,
      ScopeGuard,
      ...(options.partners
        ? [
            { provide: PartnerVerifier, ...(options.partnerVerifier ?? { useClass: RpcPartnerVerifier }) },
            BasicStrategy,
            BasicAuthGuard,
            PartnerProgramGuard,
          ]
        : []),
    ];
    return { module: SecurityModule, imports: options.imports, providers, exports: providers };
  }
}

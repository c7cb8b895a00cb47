import { Module } from '@nestjs/common';
import { APP_CONFIG, REDIS, type RedisClient } from '@svc/platform';
import { RateLimiter, rateLimitPolicy, RedisRateLimiter } from '@svc/security';
import type { ConsentUiConfig } from '../config';
import { SessionsModule } from '../sessions/sessions.module';
import { PortalController } from './portal.controller';
import { PortalService } from './portal.service';

/** The partner portal (`/portal/*`): pages for a partner's staff, opened with a single-use link. */
@Module({
  imports: [SessionsModule],
  controllers: [PortalController],
  providers: [
    PortalService,
    // The API's own limiter on the same Redis keys: a portal page and an API call of one partner
    // count in the same two windows.
    {
      provide: RateLimiter,
      inject: [REDIS, APP_CONFIG],
      useFactory: (redis: RedisClient, config: ConsentUiConfig) =>
        new RedisRateLimiter(redis, rateLimitPolicy(config)),
    },
  ],
})
export class PortalModule {}

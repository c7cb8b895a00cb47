import { Global, Module } from '@nestjs/common';
import { APP_CONFIG } from '@svc/platform';
import { cookiePolicyOf, type ConsentUiConfig } from '../config';
import { COOKIE_POLICY, type CookiePolicy } from './session-cookies';
import { CLOCK, type Clock } from './session-store';
import { SESSION_IDLE_TIMEOUT_MS, SessionsService } from './sessions.service';
import { SessionsRepository } from './sessions.repository';

/** The repository comes from SessionStoreModule, so unit tests can put a fake store in its place. */
@Module({
  providers: [
    SessionsService,
    {
      provide: COOKIE_POLICY,
      inject: [APP_CONFIG],
      useFactory: (config: ConsentUiConfig): CookiePolicy => cookiePolicyOf(config),
    },
    {
      provide: SESSION_IDLE_TIMEOUT_MS,
      inject: [APP_CONFIG],
      useFactory: (config: ConsentUiConfig): number => config.SESSION_IDLE_TIMEOUT,
    },
    { provide: CLOCK, useValue: (() => new Date()) satisfies Clock },
  ],
  exports: [SessionsService, COOKIE_POLICY, CLOCK],
})
export class SessionsModule {}

/** The PostgreSQL-backed session tables, of crew members' and portal sessions alike. */
@Global()
@Module({ providers: [SessionsRepository], exports: [SessionsRepository] })
export class SessionStoreModule {}

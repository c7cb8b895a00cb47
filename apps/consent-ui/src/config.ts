import {
  AMQP_CONFIG,
  BASE_CONFIG,
  DATABASE_CONFIG,
  duration,
  REDIS_CONFIG,
  type AppEnv,
  type ConfigOf,
  type VarSpec,
} from '@svc/platform';
import { RATE_LIMIT_CONFIG } from '@svc/security';
import type { CookiePolicy } from './sessions/session-cookies';

export const CONSENT_UI_CONFIG = {
  ...BASE_CONFIG,
  ...DATABASE_CONFIG,
  ...AMQP_CONFIG,
  // The partner portal spends its partner's API budget: the limiter's Redis and the same limits.
  ...REDIS_CONFIG,
  ...RATE_LIMIT_CONFIG,
  /**
   * Unset means "derive it". Production refuses `false` (docs/rules.md, OAuth): a cookie that
   * travels over plain HTTP can be read and replayed.
   */
  SESSION_COOKIE_SECURE: {
    description:
      'mark browser-session cookies Secure; default: true in production, in sandbox true unless PUBLIC_BASE_URL is http://',
    parse(raw: string | undefined, appEnv: AppEnv) {
      const value = raw?.trim().toLowerCase();
      if (value === undefined || value === '') return undefined;
      if (value !== 'true' && value !== 'false') throw new Error(`must be true or false, got "${raw}"`);
      if (appEnv === 'production' && value === 'false') {
        throw new Error('must be true in production (session cookies are Secure outside local development)');
      }
      return value === 'true';
    },
  } satisfies VarSpec<boolean | undefined>,
  SESSION_IDLE_TIMEOUT: duration(
    'a browser session unused for longer than this is signed out (e.g. 30m); use refreshes it',
    { default: '30m' },
  ),
};

export type ConsentUiConfig = ConfigOf<typeof CONSENT_UI_CONFIG>;

/** Production is always Secure; a sandbox follows PUBLIC_BASE_URL (http://localhost cannot be). */
export function sessionCookieSecure(
  config: Pick<ConsentUiConfig, 'APP_ENV' | 'PUBLIC_BASE_URL' | 'SESSION_COOKIE_SECURE'>,
): boolean {
  if (config.SESSION_COOKIE_SECURE !== undefined) return config.SESSION_COOKIE_SECURE;
  if (config.APP_ENV === 'production') return true;
  return !config.PUBLIC_BASE_URL.toLowerCase().startsWith('http://');
}

/**
 * How this app's cookies are made, decided once at start-up: Secure as above, and in production
 * with the name prefixes that only a Secure https response can set (`__Host-` for the crew
 * member's session, `__Secure-` for the portal's).
 */
export function cookiePolicyOf(
  config: Pick<ConsentUiConfig, 'APP_ENV' | 'PUBLIC_BASE_URL' | 'SESSION_COOKIE_SECURE'>,
): CookiePolicy {
  return { secure: sessionCookieSecure(config), hostPrefix: config.APP_ENV === 'production' };
}

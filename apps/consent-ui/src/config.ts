import {
  AMQP_CONFIG,
  BASE_CONFIG,
  DATABASE_CONFIG,
  duration,
  type AppEnv,
  type ConfigOf,
  type VarSpec,
} from '@svc/platform';

/**
 * `SESSION_COOKIE_SECURE`: `true` or `false`; unset means "derive it". Production refuses
 * `false`: session cookies are Secure outside local development (docs/rules.md, OAuth), since a
 * session cookie that ever travels over plain HTTP can be read on the network and replayed.
 */
function sessionCookieSecureVar(): VarSpec<boolean | undefined> {
  return {
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
  };
}

export const CONSENT_UI_CONFIG = {
  ...BASE_CONFIG,
  ...DATABASE_CONFIG,
  ...AMQP_CONFIG,
  SESSION_COOKIE_SECURE: sessionCookieSecureVar(),
  SESSION_IDLE_TIMEOUT: duration(
    'a browser session unused for longer than this is signed out (e.g. 30m); use refreshes it',
    { default: '30m' },
  ),
};

export type ConsentUiConfig = ConfigOf<typeof CONSENT_UI_CONFIG>;

/**
 * Whether cookies carry `Secure`. In a local sandbox served over http://localhost a Secure cookie
 * would be pointless at best, so there it follows PUBLIC_BASE_URL; production is always Secure.
 */
export function sessionCookieSecure(
  config: Pick<ConsentUiConfig, 'APP_ENV' | 'PUBLIC_BASE_URL' | 'SESSION_COOKIE_SECURE'>,
): boolean {
  if (config.SESSION_COOKIE_SECURE !== undefined) return config.SESSION_COOKIE_SECURE;
  if (config.APP_ENV === 'production') return true;
  return !config.PUBLIC_BASE_URL.toLowerCase().startsWith('http://');
}

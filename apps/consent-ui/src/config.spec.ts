import { loadConfig } from '@svc/platform';
import { CONSENT_UI_CONFIG, cookiePolicyOf, sessionCookieSecure } from './config';
import { portalSessionKind } from './portal/portal-cookies';
import { crewSessionKind, type CookiePolicy } from './sessions/session-cookies';
import { sessionCookieOf } from './sessions/session-store';

const portalCookie = (policy: CookiePolicy, id: string) => sessionCookieOf(portalSessionKind(policy), id);
const sessionCookie = (policy: CookiePolicy, id: string) => sessionCookieOf(crewSessionKind(policy, 0), id);

const base = {
  APP_ENV: 'sandbox',
  PORT: '3004',
  DATABASE_URL: 'postgres://u:p@localhost:5432/db',
  AMQP_URL: 'amqp://guest:guest@localhost:5672/',
  REDIS_URL: 'redis://localhost:6379',
};
const production = {
  ...base,
  APP_ENV: 'production',
  PUBLIC_BASE_URL: 'https://api.example',
  DOCS_URL: 'https://docs.example',
};

describe('consent-ui configuration', () => {
  it('derives Secure cookies from PUBLIC_BASE_URL in sandbox', () => {
    expect(sessionCookieSecure(loadConfig(CONSENT_UI_CONFIG, base))).toBe(false);
    expect(
      sessionCookieSecure(
        loadConfig(CONSENT_UI_CONFIG, { ...base, PUBLIC_BASE_URL: 'https://sandbox.example' }),
      ),
    ).toBe(true);
  });

  it('makes cookies Secure in production by default', () => {
    expect(sessionCookieSecure(loadConfig(CONSENT_UI_CONFIG, production))).toBe(true);
  });

  it('names production cookies with the prefixes only a Secure https answer can set', () => {
    const id = 'x'.repeat(43);
    const prod = cookiePolicyOf(loadConfig(CONSENT_UI_CONFIG, production));
    expect(portalCookie(prod, id)).toMatch(
      /^__Secure-svc_portal=x{43}; Path=\/portal; .*; Secure; SameSite=None/,
    );
    expect(sessionCookie(prod, id)).toMatch(/^__Host-svc_session=x{43}; Path=\/; .*; Secure; SameSite=Lax/);
    // The sandbox over http://localhost cannot be Secure, so it keeps the plain names.
    const sandbox = cookiePolicyOf(loadConfig(CONSENT_UI_CONFIG, base));
    expect(portalCookie(sandbox, id)).toMatch(/^svc_portal=x{43}; Path=\/portal; /);
    expect(sessionCookie(sandbox, id)).toMatch(/^svc_session=x{43}; Path=\/; /);
  });

  it('lets sandbox force either value', () => {
    expect(
      sessionCookieSecure(loadConfig(CONSENT_UI_CONFIG, { ...base, SESSION_COOKIE_SECURE: 'true' })),
    ).toBe(true);
    expect(
      sessionCookieSecure(
        loadConfig(CONSENT_UI_CONFIG, {
          ...base,
          PUBLIC_BASE_URL: 'https://sandbox.example',
          SESSION_COOKIE_SECURE: 'false',
        }),
      ),
    ).toBe(false);
  });

  it('refuses to start with insecure cookies in production, or with a value that is not a boolean', () => {
    expect(() => loadConfig(CONSENT_UI_CONFIG, { ...production, SESSION_COOKIE_SECURE: 'false' })).toThrow(
      /SESSION_COOKIE_SECURE must be true in production/,
    );
    expect(() => loadConfig(CONSENT_UI_CONFIG, { ...base, SESSION_COOKIE_SECURE: 'yes' })).toThrow(
      /SESSION_COOKIE_SECURE must be true or false/,
    );
  });
});

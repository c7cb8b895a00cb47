import { loadConfig } from '@svc/platform';
import { CONSENT_UI_CONFIG, sessionCookieSecure } from './config';

const base = {
  APP_ENV: 'sandbox',
  PORT: '3004',
  DATABASE_URL: 'postgres://u:p@localhost:5432/db',
  AMQP_URL: 'amqp://guest:guest@localhost:5672/',
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

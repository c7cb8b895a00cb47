import { loadConfig } from '@svc/platform';
import { CREW_API_CONFIG } from './config';

const base = {
  APP_ENV: 'sandbox',
  PORT: '3002',
  DATABASE_URL: 'postgres://u:p@localhost:5432/db',
  REDIS_URL: 'redis://localhost:6379',
  AMQP_URL: 'amqp://guest:guest@localhost:5672/',
};
const production = {
  ...base,
  APP_ENV: 'production',
  PUBLIC_BASE_URL: 'https://api.example',
  DOCS_URL: 'https://docs.example',
  INTERNAL_API_TOKEN: 'internal-token-of-production-0123456789abcdef',
};

describe('crew-api configuration', () => {
  it('has sandbox defaults for the internal token and the cursor key', () => {
    const config = loadConfig(CREW_API_CONFIG, base);
    expect(config.INTERNAL_API_TOKEN).toBe('sandbox-internal-token');
    expect(config.CURSOR_SIGNING_KEY.length).toBeGreaterThanOrEqual(32);
  });

  it('requires CURSOR_SIGNING_KEY in production', () => {
    expect(() => loadConfig(CREW_API_CONFIG, production)).toThrow(/CURSOR_SIGNING_KEY is required/);
    const config = loadConfig(CREW_API_CONFIG, { ...production, CURSOR_SIGNING_KEY: 'k'.repeat(40) });
    expect(config.CURSOR_SIGNING_KEY).toBe('k'.repeat(40));
  });

  it('refuses the sandbox values, and a short internal token, in production', () => {
    const keys = { ...production, CURSOR_SIGNING_KEY: 'k'.repeat(40) };
    expect(() =>
      loadConfig(CREW_API_CONFIG, { ...keys, INTERNAL_API_TOKEN: 'sandbox-internal-token' }),
    ).toThrow(/INTERNAL_API_TOKEN must be at least 32 characters/);
    expect(() =>
      loadConfig(CREW_API_CONFIG, {
        ...keys,
        CURSOR_SIGNING_KEY: 'sandbox-only-cursor-signing-key-0123456789',
      }),
    ).toThrow(/CURSOR_SIGNING_KEY must not be a published sandbox value/);
  });

  it('refuses a short cursor key', () => {
    expect(() => loadConfig(CREW_API_CONFIG, { ...base, CURSOR_SIGNING_KEY: 'too-short' })).toThrow(
      /CURSOR_SIGNING_KEY must be at least 32 characters/,
    );
  });
});

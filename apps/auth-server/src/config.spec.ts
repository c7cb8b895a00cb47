import { FAILED_AUTH_CONFIG } from '@svc/security';
import { AUTH_SERVER_CONFIG } from './config';

const parse = <K extends keyof typeof AUTH_SERVER_CONFIG>(
  name: K,
  raw: string | undefined,
  appEnv: 'sandbox' | 'production',
) => AUTH_SERVER_CONFIG[name].parse(raw, appEnv, {});

describe('auth-server configuration', () => {
  it('hashes passwords at 2^17 by default, in production and in the sandbox', () => {
    expect(parse('PASSWORD_HASH_COST', undefined, 'production')).toBe(17);
    expect(parse('PASSWORD_HASH_COST', undefined, 'sandbox')).toBe(17);
    expect(parse('PASSWORD_HASH_COST', '18', 'production')).toBe(18);
  });

  it('refuses a cost below 2^17 in production at start-up; the sandbox (tests) may go lower', () => {
    for (const weak of ['16', '14', '10']) {
      expect(() => parse('PASSWORD_HASH_COST', weak, 'production')).toThrow('>= 17 in production');
    }
    expect(parse('PASSWORD_HASH_COST', '12', 'sandbox')).toBe(12);
    expect(() => parse('PASSWORD_HASH_COST', '9', 'sandbox')).toThrow('>= 10');
    expect(() => parse('PASSWORD_HASH_COST', '19', 'production')).toThrow('<= 18');
  });

  it('limits failed client authentications per address: strict in production, generous in the sandbox', () => {
    expect(AUTH_SERVER_CONFIG.CLIENT_AUTH_FAILURES_PER_ADDRESS).toBe(
      FAILED_AUTH_CONFIG.CLIENT_AUTH_FAILURES_PER_ADDRESS,
    );
    expect(parse('CLIENT_AUTH_FAILURES_PER_ADDRESS', undefined, 'production')).toBe(60);
    expect(parse('AUTH_FAILURES_PER_ADDRESS', undefined, 'production')).toBe(600);
    expect(parse('CLIENT_AUTH_FAILURES_PER_ADDRESS', undefined, 'sandbox')).toBe(100_000);
    expect(parse('AUTH_FAILURES_PER_ADDRESS', undefined, 'sandbox')).toBe(100_000);
    expect(parse('AUTH_FAILURE_WINDOW', undefined, 'production')).toBe(600_000);
  });
});

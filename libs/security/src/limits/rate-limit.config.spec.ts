import { BASE_CONFIG, ConfigError, loadConfig, REDIS_CONFIG } from '@svc/platform';
import {
  DAY_MS,
  MINUTE_MS,
  RATE_LIMIT_CONFIG,
  rateLimitConfigOf,
  rateLimitPolicy,
} from './rate-limit.config';

const problemsOf = (env: NodeJS.ProcessEnv) => {
  try {
    loadConfig(RATE_LIMIT_CONFIG, env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('the configuration was accepted');
};

describe('RATE_LIMIT_CONFIG', () => {
  it('defaults to the interface’s limits, 600 per minute and 10,000 per day', () => {
    const defaults = { RATE_LIMIT_PER_MINUTE: 600, RATE_LIMIT_PER_DAY: 10_000 };
    expect(loadConfig(RATE_LIMIT_CONFIG, {})).toEqual(defaults);
    expect(loadConfig(RATE_LIMIT_CONFIG, { APP_ENV: 'production' })).toEqual(defaults);
  });

  it('takes other limits from the environment', () => {
    expect(loadConfig(RATE_LIMIT_CONFIG, { RATE_LIMIT_PER_MINUTE: '5', RATE_LIMIT_PER_DAY: ' 8 ' })).toEqual({
      RATE_LIMIT_PER_MINUTE: 5,
      RATE_LIMIT_PER_DAY: 8,
    });
  });

  it.each([
    ['0', 'must be >= 1'],
    ['-5', 'must be >= 1'],
    ['1.5', 'must be an integer'],
    ['lots', 'must be an integer'],
    ['1000001', 'must be <= 1000000'],
  ])('refuses RATE_LIMIT_PER_MINUTE=%s and says why', (value, reason) => {
    expect(problemsOf({ RATE_LIMIT_PER_MINUTE: value })).toEqual([
      { variable: 'RATE_LIMIT_PER_MINUTE', reason: expect.stringContaining(reason) as string },
    ]);
  });

  it('refuses a day limit that would keep an unbounded bucket, and names both bad variables at once', () => {
    expect(problemsOf({ RATE_LIMIT_PER_MINUTE: 'x', RATE_LIMIT_PER_DAY: '1000001' })).toEqual([
      { variable: 'RATE_LIMIT_PER_MINUTE', reason: expect.stringContaining('integer') as string },
      { variable: 'RATE_LIMIT_PER_DAY', reason: 'must be <= 1000000' },
    ]);
  });

  it('spreads into an app’s spec like the platform’s specs', () => {
    const spec = { ...BASE_CONFIG, ...REDIS_CONFIG, ...RATE_LIMIT_CONFIG };
    const config = loadConfig(spec, {
      APP_ENV: 'sandbox',
      PORT: '3000',
      REDIS_URL: 'redis://localhost',
      RATE_LIMIT_PER_DAY: '20000',
    });
    expect(rateLimitConfigOf(config)).toEqual({ RATE_LIMIT_PER_MINUTE: 600, RATE_LIMIT_PER_DAY: 20_000 });
  });
});

describe('rateLimitConfigOf / rateLimitPolicy', () => {
  it('finds no limits in an app that does not declare them (it meters nothing)', () => {
    expect(rateLimitConfigOf({ PORT: 3000 })).toBeUndefined();
  });

  it('refuses half a declaration', () => {
    expect(() => rateLimitConfigOf({ RATE_LIMIT_PER_MINUTE: 600 })).toThrow(/RATE_LIMIT_CONFIG/);
    expect(() => rateLimitConfigOf({ RATE_LIMIT_PER_DAY: 10_000 })).toThrow(/RATE_LIMIT_CONFIG/);
    expect(() => rateLimitConfigOf({ RATE_LIMIT_PER_MINUTE: 600, RATE_LIMIT_PER_DAY: '10000' })).toThrow(
      /RATE_LIMIT_CONFIG/,
    );
  });

  it('uses windows of exactly 60 s and 24 h', () => {
    expect(rateLimitPolicy({ RATE_LIMIT_PER_MINUTE: 600, RATE_LIMIT_PER_DAY: 10_000 })).toEqual({
      minute: { limit: 600, windowMs: 60_000 },
      day: { limit: 10_000, windowMs: 86_400_000 },
    });
    expect([MINUTE_MS, DAY_MS]).toEqual([60 * 1000, 24 * 3600 * 1000]);
  });
});

import type { RedisClient } from '@svc/platform';
import { ApiProblem } from '@svc/platform';
import { clientAddress } from './client-address';
import { FailedAuthLimiter, failedAuthConfigOf, failedAuthKey } from './failed-auth-limiter';

/** A Redis that runs the failure script's INCR/PEXPIRE in memory (or fails every call). */
function fakeRedis(opts: { down?: boolean } = {}) {
  const counts = new Map<string, { n: number; expiresAt: number }>();
  const calls: string[] = [];
  let now = 0;
  const redis = {
    eval: (_script: string, _n: number, key: string, windowMs: number) => {
      calls.push(key);
      if (opts.down) return Promise.reject(new Error('Connection is closed.'));
      const entry = counts.get(key);
      const live = entry && entry.expiresAt > now ? entry : { n: 0, expiresAt: now + windowMs };
      live.n += 1;
      counts.set(key, live);
      return Promise.resolve([live.n, live.expiresAt - now]);
    },
  } as unknown as RedisClient;
  return { redis, calls, advance: (ms: number) => (now += ms), now: () => now };
}

const config = {
  AUTH_FAILURES_PER_ADDRESS: 3,
  CLIENT_AUTH_FAILURES_PER_ADDRESS: 2,
  AUTH_FAILURE_WINDOW: 60_000,
  CLIENT_IPV6_PREFIX: 64,
};

function refusal(fn: () => void): ApiProblem | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return err as ApiProblem;
  }
}

describe('FailedAuthLimiter', () => {
  it('refuses an address once its failures reach the limit, with 429 and Retry-After, until the window ends', async () => {
    const fake = fakeRedis();
    const limiter = new FailedAuthLimiter(fake.redis, config, undefined, fake.now);
    for (let i = 0; i < 3; i++) {
      expect(refusal(() => limiter.check('bearer', '203.0.113.1'))).toBeUndefined();
      await limiter.recordFailure('bearer', '203.0.113.1');
    }
    const refused = refusal(() => limiter.check('bearer', '203.0.113.1'));
    expect(refused).toBeInstanceOf(ApiProblem);
    expect(refused?.status).toBe(429);
    expect(refused?.code).toBe('rate_limit_exceeded');
    expect(refused?.extras.headers).toEqual({ 'retry-after': '60' });
    // Another address, and the other kind, are not affected.
    expect(refusal(() => limiter.check('bearer', '203.0.113.2'))).toBeUndefined();
    expect(refusal(() => limiter.check('client', '203.0.113.1'))).toBeUndefined();
    fake.advance(45_000);
    expect(refusal(() => limiter.check('bearer', '203.0.113.1'))?.extras.headers).toEqual({
      'retry-after': '15',
    });
    fake.advance(15_000);
    expect(refusal(() => limiter.check('bearer', '203.0.113.1'))).toBeUndefined();
  });

  it('keeps a counter per address and kind in Redis under the address as hash tag', async () => {
    const fake = fakeRedis();
    const limiter = new FailedAuthLimiter(fake.redis, config, undefined, fake.now);
    await limiter.recordFailure('client', '2001:db8::1');
    await limiter.recordFailure('bearer', undefined);
    expect(fake.calls).toEqual(['authfail:{2001:db8:0:0:0:0:0:0/64}:client', 'authfail:{unknown}:bearer']);
    expect(failedAuthKey('client', '198.51.100.7')).toBe('authfail:{198.51.100.7}:client');
    // Client credentials have their own, lower limit.
    await limiter.recordFailure('client', '2001:db8::1');
    expect(refusal(() => limiter.check('client', '2001:db8::1'))?.status).toBe(429);
  });

  it('counts the addresses of one IPv6 /64 together (CLIENT_IPV6_PREFIX), and IPv4 addresses each alone', async () => {
    const fake = fakeRedis();
    const limiter = new FailedAuthLimiter(fake.redis, config, undefined, fake.now);
    for (const address of ['2001:db8:7:1::1', '2001:db8:7:1::2', '2001:db8:7:1:aaaa::3'])
      await limiter.recordFailure('bearer', address);
    expect(refusal(() => limiter.check('bearer', '2001:db8:7:1:ffff::9'))?.status).toBe(429);
    expect(refusal(() => limiter.check('bearer', '2001:db8:7:2::1'))).toBeUndefined();
    for (const address of ['198.51.100.1', '198.51.100.2', '198.51.100.3'])
      await limiter.recordFailure('bearer', address);
    expect(refusal(() => limiter.check('bearer', '198.51.100.4'))).toBeUndefined();
    const wide = new FailedAuthLimiter(
      fake.redis,
      { ...config, CLIENT_IPV6_PREFIX: 128 },
      undefined,
      fake.now,
    );
    await wide.recordFailure('bearer', '2001:db8:9::1');
    expect(fake.calls.at(-1)).toBe('authfail:{2001:db8:9:0:0:0:0:1/128}:bearer');
  });

  it('learns of a window another replica exhausted at its own first failure', async () => {
    const fake = fakeRedis();
    const a = new FailedAuthLimiter(fake.redis, config, undefined, fake.now);
    const b = new FailedAuthLimiter(fake.redis, config, undefined, fake.now);
    for (let i = 0; i < 3; i++) await a.recordFailure('bearer', '203.0.113.9');
    expect(refusal(() => b.check('bearer', '203.0.113.9'))).toBeUndefined();
    await b.recordFailure('bearer', '203.0.113.9');
    expect(refusal(() => b.check('bearer', '203.0.113.9'))?.status).toBe(429);
  });

  it('fails open when Redis is unavailable: nothing is refused, nothing rejects', async () => {
    const fake = fakeRedis({ down: true });
    const warnings: string[] = [];
    const logger = { warn: (_o: unknown, msg: string) => warnings.push(msg) } as never;
    const limiter = new FailedAuthLimiter(fake.redis, config, logger, fake.now);
    for (let i = 0; i < 10; i++)
      await expect(limiter.recordFailure('bearer', '203.0.113.1')).resolves.toBeUndefined();
    expect(refusal(() => limiter.check('bearer', '203.0.113.1'))).toBeUndefined();
    // One warning, not one per failure.
    expect(warnings).toHaveLength(1);
  });

  it('takes its limits from the app config, or the defaults of APP_ENV', () => {
    expect(failedAuthConfigOf({ APP_ENV: 'production' })).toEqual({
      AUTH_FAILURES_PER_ADDRESS: 600,
      CLIENT_AUTH_FAILURES_PER_ADDRESS: 60,
      AUTH_FAILURE_WINDOW: 600_000,
      CLIENT_IPV6_PREFIX: 64,
    });
    expect(failedAuthConfigOf({ APP_ENV: 'sandbox' }).AUTH_FAILURES_PER_ADDRESS).toBe(100_000);
    expect(failedAuthConfigOf({ ...config, APP_ENV: 'production' })).toMatchObject(config);
  });
});

describe('clientAddress', () => {
  it('is the address the gateway appended, never one the client put before it', () => {
    const socket = { remoteAddress: '10.0.0.5' };
    expect(clientAddress({ headers: { 'x-forwarded-for': '1.2.3.4, 203.0.113.7' }, socket })).toBe(
      '203.0.113.7',
    );
    expect(clientAddress({ headers: { 'x-forwarded-for': ['1.2.3.4', '203.0.113.8'] }, socket })).toBe(
      '203.0.113.8',
    );
    expect(clientAddress({ headers: {}, socket })).toBe('10.0.0.5');
  });
});

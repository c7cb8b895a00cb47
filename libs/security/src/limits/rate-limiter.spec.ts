import { DependencyUnavailableError } from '@svc/platform';
import type Redis from 'ioredis';
import { ReplyError } from 'ioredis';
import type { RateLimitPolicy } from './rate-limit.config';
import { RATE_LIMIT_LUA, RATE_LIMIT_SHA } from './rate-limit.script';
import { RedisRateLimiter, UnconfiguredRateLimiter } from './rate-limiter';

const S = 1_000_000;
const NOW = 1_763_000_000 * S;
const POLICY: RateLimitPolicy = {
  minute: { limit: 5, windowMs: 60_000 },
  day: { limit: 8, windowMs: 86_400_000 },
};
const ADMITTED_REPLY = [1, NOW, 1, NOW + 60 * S, 1, NOW + 86_400 * S];

const replyError = (message: string): Error => new (ReplyError as new (message: string) => Error)(message);

/** Redis as the limiter sees it: EVALSHA and EVAL, answered by the test. */
class FakeRedis {
  readonly calls: { command: 'evalsha' | 'eval'; args: unknown[] }[] = [];
  constructor(
    public evalsha: (...args: unknown[]) => Promise<unknown> = async () => ADMITTED_REPLY,
    public eval_: (...args: unknown[]) => Promise<unknown> = async () => ADMITTED_REPLY,
  ) {}
  asRedis(): Redis {
    return {
      evalsha: (...args: unknown[]) => {
        this.calls.push({ command: 'evalsha', args });
        return this.evalsha(...args);
      },
      eval: (...args: unknown[]) => {
        this.calls.push({ command: 'eval', args });
        return this.eval_(...args);
      },
    } as unknown as Redis;
  }
}

describe('RedisRateLimiter', () => {
  it('makes one EVALSHA per request: the client’s list and both windows in µs', async () => {
    const redis = new FakeRedis();
    const limiter = new RedisRateLimiter(redis.asRedis(), POLICY);

    await expect(limiter.consume('sandbox-partner')).resolves.toEqual({
      admitted: true,
      window: 'minute',
      limit: 5,
      remaining: 4,
      resetAt: NOW / S + 60,
    });
    await limiter.consume('sandbox-partner');

    expect(redis.calls.map((c) => c.command)).toEqual(['evalsha', 'evalsha']);
    const [first, second] = redis.calls.map((c) => c.args);
    expect(first).toEqual([
      RATE_LIMIT_SHA,
      1,
      'ratelimit:{sandbox-partner}:times',
      '5',
      String(60_000 * 1000),
      '8',
      String(86_400_000 * 1000),
    ]);
    expect(second).toEqual(first);
  });

  it('passes the token’s tombstone and generation after the client’s keys, and reads the generation back', async () => {
    const redis = new FakeRedis(async () => [...ADMITTED_REPLY, '1763000000000000']);
    const limiter = new RedisRateLimiter(redis.asRedis(), POLICY);
    await expect(
      limiter.consumeForToken('c', { tombstone: 'revoked:{c}:d', generation: 'generation:{c}' }),
    ).resolves.toMatchObject({ generation: '1763000000000000', decision: { admitted: true } });
    expect(redis.calls[0].args.slice(1, 5)).toEqual([
      3,
      'ratelimit:{c}:times',
      'revoked:{c}:d',
      'generation:{c}',
    ]);

    const revoked = new FakeRedis(async () => [-1]);
    await expect(
      new RedisRateLimiter(revoked.asRedis(), POLICY).consumeForToken('c', {
        tombstone: 'revoked:{c}:d',
        generation: 'generation:{c}',
      }),
    ).resolves.toBeUndefined();
  });

  it('turns a refusal into a decision with Retry-After', async () => {
    const redis = new FakeRedis(async () => [0, NOW, 5, NOW + 12 * S + 1, 5, NOW + 86_000 * S]);
    await expect(new RedisRateLimiter(redis.asRedis(), POLICY).consume('c')).resolves.toEqual({
      admitted: false,
      window: 'minute',
      limit: 5,
      remaining: 0,
      resetAt: NOW / S + 13,
      retryAfter: 13,
    });
  });

  it('sends the script itself when Redis does not know it (NOSCRIPT: first use, restart, failover)', async () => {
    const redis = new FakeRedis(() =>
      Promise.reject(replyError('NOSCRIPT No matching script. Please use EVAL.')),
    );
    const limiter = new RedisRateLimiter(redis.asRedis(), POLICY);

    await expect(limiter.consume('c')).resolves.toMatchObject({ admitted: true });
    expect(redis.calls.map((c) => c.command)).toEqual(['evalsha', 'eval']);
    expect(redis.calls[1].args[0]).toBe(RATE_LIMIT_LUA);
    expect(redis.calls[1].args.slice(1)).toEqual(redis.calls[0].args.slice(1));
  });

  it.each([
    [
      'a closed connection (no offline queue)',
      new Error("Stream isn't writeable and enableOfflineQueue options is false"),
    ],
    ['the 1 s command timeout', new Error('Command timed out')],
    ['a Redis that is loading its data', replyError('LOADING Redis is loading the dataset in memory')],
    ['a Redis out of memory', replyError("OOM command not allowed when used memory > 'maxmemory'.")],
    [
      'a read-only replica after a failover',
      replyError("READONLY You can't write against a read only replica."),
    ],
  ])('fails closed with DependencyUnavailableError on %s', async (_case, error) => {
    const redis = new FakeRedis(() => Promise.reject(error));
    const failure = await new RedisRateLimiter(redis.asRedis(), POLICY)
      .consume('c')
      .catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(DependencyUnavailableError);
    expect((failure as DependencyUnavailableError).dependency).toBe('redis (rate limiter)');
    expect((failure as Error).cause).toBe(error);
  });

  it('fails closed as well when the EVAL after NOSCRIPT cannot reach Redis', async () => {
    const redis = new FakeRedis(
      () => Promise.reject(replyError('NOSCRIPT No matching script.')),
      () => Promise.reject(new Error('Connection is closed.')),
    );
    await expect(new RedisRateLimiter(redis.asRedis(), POLICY).consume('c')).rejects.toMatchObject({
      dependency: 'redis (rate limiter)',
    });
  });

  it('lets a fault in the script surface as itself (a logged 500, not a 503 to retry)', async () => {
    const fault = replyError('ERR user_script:3: attempt to compare nil with number');
    const redis = new FakeRedis(() => Promise.reject(fault));
    await expect(new RedisRateLimiter(redis.asRedis(), POLICY).consume('c')).rejects.toBe(fault);
  });

  it.each([[null], [[1, 2, 3]], [[1, NOW, 1, 'x', 1, NOW]]])(
    'refuses a reply of another shape (%#)',
    async (reply) => {
      const redis = new FakeRedis(async () => reply);
      await expect(new RedisRateLimiter(redis.asRedis(), POLICY).consume('c')).rejects.toThrow(
        /unexpected reply/,
      );
    },
  );

  it.each([
    ['a zero limit', { ...POLICY, minute: { limit: 0, windowMs: 60_000 } }],
    ['a fractional window', { ...POLICY, day: { limit: 8, windowMs: 0.5 } }],
    [
      'a day shorter than the minute',
      { minute: { limit: 5, windowMs: 2000 }, day: { limit: 8, windowMs: 1000 } },
    ],
  ])('refuses a policy with %s', (_case, policy) => {
    expect(() => new RedisRateLimiter(new FakeRedis().asRedis(), policy)).toThrow();
  });
});

describe('UnconfiguredRateLimiter', () => {
  it('fails a metered request with a message naming RATE_LIMIT_CONFIG', async () => {
    await expect(new UnconfiguredRateLimiter().consume()).rejects.toThrow(/RATE_LIMIT_CONFIG/);
  });
});

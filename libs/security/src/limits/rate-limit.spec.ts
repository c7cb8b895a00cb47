import type { ExecutionContext } from '@nestjs/common';
import { ApiProblem, AppMetrics, DependencyUnavailableError } from '@svc/platform';
import type Redis from 'ioredis';
import { ReplyError } from 'ioredis';
import { BearerAuth } from '../authentication/bearer-auth.decorator';
import { BearerAuthGuard, ScopeGuard, type Principal } from '../authentication/bearer-auth.guard';
import type { RateLimitPolicy } from './rate-limit.config';
import {
  decide,
  keepDecision,
  RATE_LIMIT_LUA,
  RATE_LIMIT_SHA,
  RateLimitGuard,
  RateLimiter,
  RedisRateLimiter,
  UnconfiguredRateLimiter,
  type RateLimitDecision,
  type WindowState,
} from './rate-limit';

const PRINCIPAL: Principal = {
  user_id: 'usr_1',
  client_id: 'sandbox-partner',
  scopes: ['profile:read'],
  expires_at: '2099-01-01T00:00:00.000Z',
};

const ADMITTED: RateLimitDecision = {
  admitted: true,
  window: 'minute',
  limit: 600,
  remaining: 599,
  resetAt: 1_763_000_060,
};
const REFUSED: RateLimitDecision = {
  admitted: false,
  window: 'minute',
  limit: 600,
  remaining: 0,
  resetAt: 1_763_000_042,
  retryAfter: 42,
};

/** Records what the guard asks for and what it does to the reply, in order. */
class FakeLimiter extends RateLimiter {
  readonly asked: string[] = [];
  constructor(private readonly answer: () => Promise<RateLimitDecision>) {
    super();
  }
  consume(clientId: string) {
    this.asked.push(clientId);
    return this.answer();
  }
  consumeForToken(): Promise<never> {
    throw new Error('RateLimitGuard never checks a token');
  }
}

function contextFor(request: object) {
  const events: string[] = [];
  const headers: Record<string, string> = {};
  const reply = {
    header(name: string, value: string) {
      events.push(`header ${name}`);
      headers[name] = value;
      return reply;
    },
  };
  const context = {
    switchToHttp: () => ({ getRequest: () => request, getResponse: () => reply }),
  } as unknown as ExecutionContext;
  return { context, headers, events };
}

const onRoute = (url: string, user: unknown = PRINCIPAL) => ({ user, url, routeOptions: { url } });

async function outcome(promise: Promise<boolean>): Promise<boolean | unknown> {
  return promise.then(
    (passed) => passed,
    (err: unknown) => err,
  );
}

describe('RateLimitGuard', () => {
  it('applies the decision BearerAuthGuard already made for the request, without counting it again', async () => {
    const limiter = new FakeLimiter(async () => ADMITTED);
    const request = onRoute('/v1/me');
    keepDecision(request, REFUSED);
    const { context, headers } = contextFor(request);

    const refused = await outcome(new RateLimitGuard(limiter).canActivate(context));
    expect(refused).toBeInstanceOf(ApiProblem);
    expect((refused as ApiProblem).status).toBe(429);
    expect(limiter.asked).toEqual([]);
    expect(headers['x-ratelimit-remaining']).toBe('0');
  });

  it('admits, counting the request under the principal’s client_id, and sets the headers', async () => {
    const limiter = new FakeLimiter(async () => ADMITTED);
    const { context, headers } = contextFor(onRoute('/v1/me'));
    jest.useFakeTimers({ now: 1763000000_000 });

    try {
      await expect(new RateLimitGuard(limiter).canActivate(context)).resolves.toBe(true);
    } finally {
      jest.useRealTimers();
    }
    expect(limiter.asked).toEqual(['sandbox-partner']);
    expect(headers).toEqual({
      'x-ratelimit-limit': '600',
      'x-ratelimit-remaining': '599',
      'x-ratelimit-reset': '1763000060',
      // draft-ietf-httpapi-ratelimit-headers-11: the same window, `t` seconds from now to the reset.
      'ratelimit-policy': '"minute";q=600;w=60',
      ratelimit: '"minute";r=599;t=60',
    });
  });

  it('refuses with 429 rate_limit_exceeded and Retry-After, after putting the headers on the reply', async () => {
    const { context, headers, events } = contextFor(onRoute('/v1/me/vessels'));

    const error = await outcome(
      new RateLimitGuard(new FakeLimiter(async () => REFUSED)).canActivate(context),
    );
    expect(error).toBeInstanceOf(ApiProblem);
    const problem = error as ApiProblem;
    expect(problem.status).toBe(429);
    expect(problem.code).toBe('rate_limit_exceeded');
    expect(problem.extras.headers).toEqual({ 'retry-after': '42' });
    expect(problem.detail).toBe('This client has used its 600 requests per minute; retry after 42 seconds.');
    // The filter renders the problem onto this same reply: the headers are already there.
    expect(events).toEqual([
      'header x-ratelimit-limit',
      'header x-ratelimit-remaining',
      'header x-ratelimit-reset',
      'header ratelimit-policy',
      'header ratelimit',
    ]);
    expect(headers).toMatchObject({
      'x-ratelimit-limit': '600',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': '1763000042',
      'ratelimit-policy': '"minute";q=600;w=60',
    });
    expect(headers.ratelimit).toMatch(/^"minute";r=0;t=\d+$/);
  });

  it('counts a refusal by window, partner and tier; an admitted request not at all', async () => {
    const metrics = new AppMetrics('crew-api');
    const refusing = new RateLimitGuard(new FakeLimiter(async () => REFUSED), metrics);
    await outcome(refusing.canActivate(contextFor(onRoute('/v1/me')).context));
    await outcome(
      refusing.canActivate(
        contextFor(onRoute('/v1/me', { ...PRINCIPAL, client_id: 'sandbox-partner-b' })).context,
      ),
    );
    await outcome(refusing.canActivate(contextFor(onRoute('/v1/me')).context));
    const admitting = new RateLimitGuard(new FakeLimiter(async () => ADMITTED), metrics);
    await admitting.canActivate(contextFor(onRoute('/v1/me')).context);
    const lines = (await metrics.render())
      .split('\n')
      .filter((l) => l.startsWith('rate_limit_refusals_total{'));
    expect(lines.sort()).toEqual([
      'rate_limit_refusals_total{window="minute",partner="sandbox-partner",tier="standard",app="crew-api"} 2',
      'rate_limit_refusals_total{window="minute",partner="sandbox-partner-b",tier="standard",app="crew-api"} 1',
    ]);
  });

  it('names the day window and a single second in the detail when that is what the client waits for', async () => {
    const decision: RateLimitDecision = { ...REFUSED, window: 'day', limit: 10_000, retryAfter: 1 };
    const { context } = contextFor(onRoute('/v1/me'));
    const problem = (await outcome(
      new RateLimitGuard(new FakeLimiter(async () => decision)).canActivate(context),
    )) as ApiProblem;
    expect(problem.detail).toBe('This client has used its 10000 requests per day; retry after 1 second.');
    expect(problem.extras.headers).toEqual({ 'retry-after': '1' });
  });

  it('meters any caller with a client_id: a Basic-authenticated partner (no user, no scopes)', async () => {
    const limiter = new FakeLimiter(async () => ADMITTED);
    const { context } = contextFor(onRoute('/v1/partners/sponsorships', { client_id: 'sandbox-partner-b' }));
    await expect(new RateLimitGuard(limiter).canActivate(context)).resolves.toBe(true);
    expect(limiter.asked).toEqual(['sandbox-partner-b']);
  });

  it('lets an unavailable limiter through as DependencyUnavailableError (503, fail closed) with no headers', async () => {
    const { context, headers } = contextFor(onRoute('/v1/me'));
    const limiter = new FakeLimiter(() =>
      Promise.reject(new DependencyUnavailableError('redis (rate limiter)')),
    );
    expect(await outcome(new RateLimitGuard(limiter).canActivate(context))).toBeInstanceOf(
      DependencyUnavailableError,
    );
    expect(headers).toEqual({});
  });

  it.each([['/oauth/userinfo'], ['/probe/any'], ['/v1']])(
    'does not meter %s: only /v1/* is rate-limited (docs/rules.md "Limits")',
    async (route) => {
      const limiter = new FakeLimiter(async () => REFUSED);
      const { context, headers } = contextFor(onRoute(route));
      await expect(new RateLimitGuard(limiter).canActivate(context)).resolves.toBe(true);
      expect(limiter.asked).toEqual([]);
      expect(headers).toEqual({});
    },
  );

  it('judges by the route pattern, and falls back to the request path', async () => {
    const limiter = new FakeLimiter(async () => ADMITTED);
    const { context } = contextFor({ user: PRINCIPAL, url: '/v1/me?x=1' });
    await expect(new RateLimitGuard(limiter).canActivate(context)).resolves.toBe(true);
    expect(limiter.asked).toHaveLength(1);
  });

  it.each([
    ['no caller', undefined],
    ['a caller without a client_id', { user_id: 'usr_1' }],
    ['an empty client_id', { client_id: '' }],
  ])('refuses to run with %s (a wiring mistake is never a pass)', async (_case, user) => {
    const limiter = new FakeLimiter(async () => ADMITTED);
    const { context } = contextFor({ user, routeOptions: { url: '/v1/me' } });
    await expect(new RateLimitGuard(limiter).canActivate(context)).rejects.toThrow(/after a guard/);
    expect(limiter.asked).toEqual([]);
  });
});

describe('@BearerAuth()', () => {
  class Probe {
    @BearerAuth('profile:read')
    handler() {}
  }

  it('runs the token check, then the rate limit, then the scope check', () => {
    // The decorator's guard list, found among the handler's metadata without Nest's internal key.
    const handler = Probe.prototype.handler;
    const guards = Reflect.getMetadataKeys(handler)
      .map((key) => Reflect.getMetadata(key, handler) as unknown)
      .find((value) => Array.isArray(value) && value.includes(BearerAuthGuard));
    expect(guards).toEqual([BearerAuthGuard, RateLimitGuard, ScopeGuard]);
  });
});

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

/** A Redis TIME, 0.25 s into a second. */
const TIME = 1_763_000_000 * S + 250_000;

const w = (limit: number, count: number, nextFreeUs: number): WindowState => ({ limit, count, nextFreeUs });

describe('decide: which window the headers describe (docs/rules.md "Rate limits")', () => {
  it('describes the minute window while it has fewer requests remaining', () => {
    const decision = decide(true, TIME, {
      minute: w(600, 10, TIME + 59 * S),
      day: w(10_000, 10, TIME + 86_399 * S),
    });
    expect(decision).toEqual({
      admitted: true,
      window: 'minute',
      limit: 600,
      remaining: 590,
      resetAt: Math.ceil((TIME + 59 * S) / S),
    });
  });

  it('describes the day window once it has fewer remaining than the minute window', () => {
    const decision = decide(true, TIME, {
      minute: w(600, 3, TIME + 50 * S),
      day: w(10_000, 9_500, TIME + 3_600 * S),
    });
    expect(decision).toMatchObject({ window: 'day', limit: 10_000, remaining: 500 });
    expect(decision.resetAt).toBe(Math.ceil((TIME + 3_600 * S) / S));
  });

  it('on a tie describes the window that frees a slot later', () => {
    const decision = decide(true, TIME, {
      minute: w(5, 3, TIME + 20 * S),
      day: w(8, 6, TIME + 3_000 * S),
    });
    expect(decision).toMatchObject({ window: 'day', limit: 8, remaining: 2 });
  });

  it('rounds the reset up to the next whole second', () => {
    const decision = decide(true, TIME, { minute: w(5, 1, 1_000 * S + 1), day: w(8, 1, 1_000 * S + 1) });
    expect(decision.resetAt).toBe(1_001);
    const exact = decide(true, TIME, { minute: w(5, 1, 1_000 * S), day: w(8, 1, 1_000 * S) });
    expect(exact.resetAt).toBe(1_000);
  });

  it('never shows a negative remaining count (limits lowered below what a window holds)', () => {
    const decision = decide(false, TIME, { minute: w(5, 9, TIME + 10 * S), day: w(100, 9, TIME + 100 * S) });
    expect(decision.remaining).toBe(0);
  });

  it('carries no Retry-After when admitted', () => {
    const decision = decide(true, TIME, { minute: w(5, 5, TIME + 10 * S), day: w(8, 5, TIME + 100 * S) });
    expect(decision.admitted).toBe(true);
    expect(decision.remaining).toBe(0);
    expect(decision.retryAfter).toBeUndefined();
  });
});

describe('decide: Retry-After of a refused request', () => {
  it('is the wait until the exhausted window frees a slot, rounded up', () => {
    const decision = decide(false, TIME, {
      minute: w(5, 5, TIME + 41 * S + 200_000),
      day: w(8, 5, TIME + 5_000 * S),
    });
    expect(decision).toMatchObject({
      admitted: false,
      window: 'minute',
      limit: 5,
      remaining: 0,
      retryAfter: 42,
    });
    expect(decision.resetAt).toBe(Math.ceil((TIME + 41 * S + 200_000) / S));
  });

  it('follows the day window when that is the exhausted one', () => {
    const decision = decide(false, TIME, {
      minute: w(5, 1, TIME + 59 * S),
      day: w(8, 8, TIME + 7_200 * S),
    });
    expect(decision).toMatchObject({ window: 'day', remaining: 0, retryAfter: 7_200 });
  });

  it('waits for the later of the two when both are exhausted, and the reset agrees', () => {
    const decision = decide(false, TIME, {
      minute: w(5, 5, TIME + 30 * S),
      day: w(5, 5, TIME + 600 * S),
    });
    expect(decision).toMatchObject({
      window: 'day',
      retryAfter: 600,
      resetAt: Math.ceil((TIME + 600 * S) / S),
    });
  });

  it('is at least one second, even when the slot frees within the same second', () => {
    expect(decide(false, TIME, { minute: w(5, 5, TIME + 1), day: w(8, 5, TIME) }).retryAfter).toBe(1);
    expect(decide(false, TIME, { minute: w(5, 5, TIME), day: w(8, 5, TIME) }).retryAfter).toBe(1);
  });
});

import type { ExecutionContext } from '@nestjs/common';
import { ApiProblem, AppMetrics, DependencyUnavailableError } from '@svc/platform';
import { BearerAuth } from '../authentication/bearer-auth.decorator';
import { BearerAuthGuard } from '../authentication/bearer-auth.guard';
import { keepDecision } from './metering';
import type { Principal } from '../authentication/principal';
import type { RateLimitDecision } from './rate-limit-decision';
import { RateLimitGuard } from './rate-limit.guard';
import { RateLimiter } from './rate-limiter';
import { ScopeGuard } from '../authentication/scope.guard';

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

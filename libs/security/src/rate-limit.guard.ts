import { Injectable, Optional, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { ApiProblem, AppMetrics } from '@svc/platform';
import type { Counter } from 'prom-client';
import type { RateLimitDecision } from './rate-limit-decision';
import { RateLimiter } from './rate-limiter';

/**
 * What RateLimitGuard needs: `request.user` is the authenticated caller, with the calling
 * partner's `client_id`. BearerAuthGuard puts a Principal there; the Basic guard of the partner
 * endpoints (`/v1/partners/*`) must put an object with the partner's `client_id` there too, and
 * then `@UseGuards(BasicAuthGuard, RateLimitGuard)` meters those endpoints in the same buckets.
 */
export interface RateLimitSubject {
  readonly client_id: string;
}

interface MeteredRequest {
  readonly user?: unknown;
  readonly url?: string;
  /** Fastify's route options: `url` is the route's pattern (`/v1/me/vessels`), never the raw path. */
  readonly routeOptions?: { readonly url?: string };
}

interface HeaderSink {
  header(name: string, value: string): unknown;
}

/**
 * The routes the guard meters: the public API, `/v1/*` (docs/rules.md "Limits": "every
 * authenticated /v1/* endpoint"; its exemptions are /healthz, the OAuth endpoints and OpenAPI).
 * Anything else it guards passes unmetered: `/oauth/userinfo` is an OAuth endpoint behind
 * `@BearerAuth()` too, and so are the probe routes of tests that are not about rate limits.
 */
export const RATE_LIMITED_PATH_PREFIX = '/v1/';

function isMetered(request: MeteredRequest): boolean {
  const route = request.routeOptions?.url ?? request.url ?? '';
  return route.startsWith(RATE_LIMITED_PATH_PREFIX);
}

function clientIdOf(request: MeteredRequest): string {
  const user = request.user as Partial<RateLimitSubject> | undefined;
  // Without an authenticating guard in front there is nobody to count: a wiring mistake, never a pass.
  if (typeof user?.client_id !== 'string' || user.client_id === '') {
    throw new Error(
      'RateLimitGuard runs only after a guard that puts the caller (with its client_id) on the request',
    );
  }
  return user.client_id;
}

/**
 * The headers of every metered answer (docs/rules.md "Limits"): the window with fewer requests
 * remaining; `X-RateLimit-Reset` is a Unix time in seconds.
 */
export function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  return {
    'x-ratelimit-limit': String(decision.limit),
    'x-ratelimit-remaining': String(decision.remaining),
    'x-ratelimit-reset': String(decision.resetAt),
  };
}

/** 429 `rate_limit_exceeded` with `Retry-After` in seconds (RFC 6585 §4, RFC 9110 §10.2.3). */
export function rateLimitExceededProblem(decision: RateLimitDecision): ApiProblem {
  const retryAfter = decision.retryAfter ?? 1;
  return new ApiProblem(
    'rate_limit_exceeded',
    `This client has used its ${decision.limit} requests per ${decision.window}; ` +
      `retry after ${retryAfter} second${retryAfter === 1 ? '' : 's'}.`,
    { headers: { 'retry-after': String(retryAfter) } },
  );
}

/**
 * Meters a partner's requests: runs after the authenticating guard (so a 401 is never counted)
 * and before ScopeGuard (so a 403 is counted and carries the headers), and puts the headers on
 * the reply before anything else can answer. They stay there whatever the answer turns out to
 * be: 200, 304, or an error rendered by the Problem filter, which adds its own headers to the
 * same reply without clearing any. A refused request is not counted and ends here with 429.
 *
 * Redis unavailable: the limiter rejects with DependencyUnavailableError and the request fails
 * closed with 503 (see RedisRateLimiter).
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  private readonly refusals?: Counter<'window'>;

  constructor(
    private readonly limiter: RateLimiter,
    @Optional() metrics?: AppMetrics,
  ) {
    // Refused requests by the window that ran out; the client id stays out (unbounded labels).
    this.refusals = metrics?.counter('rate_limit_refusals_total', 'requests refused with 429', ['window']);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<MeteredRequest>();
    if (!isMetered(request)) return true;
    const decision = await this.limiter.consume(clientIdOf(request));
    const reply = http.getResponse<HeaderSink>();
    for (const [name, value] of Object.entries(rateLimitHeaders(decision))) reply.header(name, value);
    if (decision.admitted) return true;
    this.refusals?.inc({ window: decision.window });
    throw rateLimitExceededProblem(decision);
  }
}

import { Injectable, Optional, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { ApiProblem, AppMetrics } from '@svc/platform';
import type { Counter } from 'prom-client';
import { isMetered, keptDecision } from './metering';
import type { RateLimitDecision } from './rate-limit-decision';
import { DAY_MS, MINUTE_MS } from './rate-limit.config';
import { RateLimiter } from './rate-limiter';

interface MeteredRequest {
  readonly user?: unknown;
  readonly url?: string;
  readonly routeOptions?: { readonly url?: string };
}

/** The length of each window the limiter keeps (RATE_LIMIT_LUA), as `w` of RateLimit-Policy. */
const WINDOW_SECONDS: Readonly<Record<RateLimitDecision['window'], number>> = {
  minute: MINUTE_MS / 1000,
  day: DAY_MS / 1000,
};

interface HeaderSink {
  header(name: string, value: string): unknown;
}

/** The client_id an authenticating guard (bearer or Basic) put on the request. */
function clientIdOf(request: MeteredRequest): string {
  const user = request.user as { readonly client_id?: unknown } | undefined;
  // Without an authenticating guard in front there is nobody to count: a wiring mistake, never a pass.
  if (typeof user?.client_id !== 'string' || user.client_id === '') {
    throw new Error(
      'RateLimitGuard runs only after a guard that puts the caller (with its client_id) on the request',
    );
  }
  return user.client_id;
}

/** 429 `rate_limit_exceeded` with `Retry-After` in seconds (RFC 6585 §4, RFC 9110 §10.2.3). */
function rateLimitExceededProblem(decision: RateLimitDecision): ApiProblem {
  const retryAfter = decision.retryAfter ?? 1;
  return new ApiProblem(
    'rate_limit_exceeded',
    `This client has used its ${decision.limit} requests per ${decision.window}; ` +
      `retry after ${retryAfter} second${retryAfter === 1 ? '' : 's'}.`,
    { headers: { 'retry-after': String(retryAfter) } },
  );
}

/**
 * Runs after the authenticating guard (a 401 is never counted) and before ScopeGuard (a 403 is
 * counted), and puts the headers on the reply first, so every answer, errors too, carries them.
 * A bearer request was already counted by BearerAuthGuard (keepDecision): its decision is applied.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  private readonly refusals?: Counter<'window' | 'partner' | 'tier'>;

  constructor(
    private readonly limiter: RateLimiter,
    @Optional() metrics?: AppMetrics,
  ) {
    // By the window that ran out, and the partner: a client_id comes from a token or credentials
    // that authenticated, so the partner registry bounds it (never raw input).
    this.refusals = metrics?.counter(
      'rate_limit_refusals_total',
      'requests refused with 429, by the window that ran out, the partner (client_id) and its limits tier',
      ['window', 'partner', 'tier'],
    );
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<MeteredRequest>();
    if (!isMetered(request)) return true;
    const clientId = clientIdOf(request);
    const decision = keptDecision(request) ?? (await this.limiter.consume(clientId));
    const reply = http.getResponse<HeaderSink>();
    reply.header('x-ratelimit-limit', String(decision.limit));
    reply.header('x-ratelimit-remaining', String(decision.remaining));
    reply.header('x-ratelimit-reset', String(decision.resetAt));
    // The same window in the IETF fields (draft-ietf-httpapi-ratelimit-headers-11 §§3-4): the
    // policy of the window the X- headers describe, and its remaining quota and seconds to reset.
    reply.header(
      'ratelimit-policy',
      `"${decision.window}";q=${decision.limit};w=${WINDOW_SECONDS[decision.window]}`,
    );
    reply.header(
      'ratelimit',
      `"${decision.window}";r=${decision.remaining};t=${Math.max(0, decision.resetAt - Math.floor(Date.now() / 1000))}`,
    );
    if (decision.admitted) return true;
    this.refusals?.inc({
      window: decision.window,
      partner: clientId,
      tier: this.limiter.tierOf(clientId),
    });
    throw rateLimitExceededProblem(decision);
  }
}

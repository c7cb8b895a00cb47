import type { RateLimitDecision } from './rate-limit-decision';

interface MeteredRequest {
  readonly url?: string;
  /** Fastify's route options: `url` is the route's pattern (`/v1/me/vessels`), never the raw path. */
  readonly routeOptions?: { readonly url?: string };
}

/**
 * docs/rules.md "Limits": "every authenticated /v1/* endpoint". Anything else passes unmetered,
 * such as `/oauth/userinfo` behind `@BearerAuth()`.
 */
export function isMetered(request: MeteredRequest): boolean {
  return (request.routeOptions?.url ?? request.url ?? '').startsWith('/v1/');
}

const DECISION = Symbol('rate limit decision');

/**
 * BearerAuthGuard counts a metered request in the same Redis call that checks its token's
 * tombstone; RateLimitGuard then applies that decision instead of counting the request again.
 */
export function keepDecision(request: object, decision: RateLimitDecision): void {
  (request as { [DECISION]?: RateLimitDecision })[DECISION] = decision;
}

export function keptDecision(request: object): RateLimitDecision | undefined {
  return (request as { [DECISION]?: RateLimitDecision })[DECISION];
}

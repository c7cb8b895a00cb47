export type RateLimitWindowName = 'minute' | 'day';

/** One window as the Redis script leaves it: the request just decided on is included if admitted. */
export interface WindowState {
  readonly limit: number;
  readonly count: number;
  /** When the window frees its next slot, in µs of the Redis clock (see RATE_LIMIT_LUA). */
  readonly nextFreeUs: number;
}

/** What a request gets: admitted or not, and the headers that describe the tighter window. */
export interface RateLimitDecision {
  readonly admitted: boolean;
  /** The window the headers describe: the one with fewer requests remaining. */
  readonly window: RateLimitWindowName;
  readonly limit: number;
  readonly remaining: number;
  /** `X-RateLimit-Reset`: the Unix second when that window frees its next slot (rounded up). */
  readonly resetAt: number;
  /** `Retry-After` in whole seconds, at least 1; only when refused. */
  readonly retryAfter?: number;
}

const US_PER_S = 1_000_000;

/**
 * The headers show the window with fewer requests remaining (docs/rules.md "Rate limits"), on a
 * tie the one freeing a slot later, so the reset agrees with Retry-After. A refusal waits until
 * every exhausted window has a slot. Rounded up: a client that waits as told is never refused.
 */
export function decide(
  admitted: boolean,
  nowUs: number,
  windows: Readonly<Record<RateLimitWindowName, WindowState>>,
): RateLimitDecision {
  const described = (['minute', 'day'] as const)
    .map((name) => {
      const w = windows[name];
      return { name, limit: w.limit, remaining: Math.max(0, w.limit - w.count), nextFreeUs: w.nextFreeUs };
    })
    .reduce((a, b) =>
      b.remaining < a.remaining || (b.remaining === a.remaining && b.nextFreeUs > a.nextFreeUs) ? b : a,
    );
  const decision: RateLimitDecision = {
    admitted,
    window: described.name,
    limit: described.limit,
    remaining: described.remaining,
    resetAt: Math.ceil(described.nextFreeUs / US_PER_S),
  };
  if (admitted) return decision;

  const waitUs = Math.max(
    0,
    ...Object.values(windows)
      .filter((w) => w.count >= w.limit)
      .map((w) => w.nextFreeUs - nowUs),
  );
  return { ...decision, retryAfter: Math.max(1, Math.ceil(waitUs / US_PER_S)) };
}

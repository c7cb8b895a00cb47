export type RateLimitWindowName = 'minute' | 'day';

/** One window as the Redis script leaves it: the request just decided on is included if admitted. */
export interface WindowState {
  readonly limit: number;
  /** Requests the window holds. */
  readonly count: number;
  /**
   * When the window frees its next slot, in microseconds of the Redis clock: the entry whose
   * departure brings the count under the limit, plus the window length (the clock itself when
   * the window is empty).
   */
  readonly nextFreeUs: number;
}

/** What a request gets: admitted or not, and the headers that describe the tighter window. */
export interface RateLimitDecision {
  readonly admitted: boolean;
  /** The window the headers describe: the one with fewer requests remaining. */
  readonly window: RateLimitWindowName;
  /** `X-RateLimit-Limit`. */
  readonly limit: number;
  /** `X-RateLimit-Remaining`. */
  readonly remaining: number;
  /** `X-RateLimit-Reset`: the Unix second when that window frees its next slot (rounded up). */
  readonly resetAt: number;
  /** `Retry-After` in whole seconds, at least 1; only when refused. */
  readonly retryAfter?: number;
}

const US_PER_S = 1_000_000;

/**
 * Chooses what the headers show (docs/rules.md "Rate limits": the window with fewer requests
 * remaining; on a tie the one that frees a slot later, so that when both are exhausted the reset
 * agrees with Retry-After) and, for a refusal, how long to wait: until every exhausted window has
 * a free slot again. Times are rounded up: a client that waits as told is never refused for
 * having come back a fraction of a second early.
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

import { int, type ConfigOf, type ConfigSpec } from '@svc/platform';

/**
 * The per-partner rate limits (docs/rules.md "Limits", docs/rules.md "Rate limits"). Every app that
 * serves `/v1/*` (crew-api, sponsorship-api) spreads this into its config spec, and every app and
 * replica must be given the same values: the buckets are shared (one sorted set per client_id in Redis), so an
 * app configured with a higher limit would admit what the others refuse.
 *
 * The day limit bounds a client's bucket: the day window keeps one sorted-set entry per admitted
 * request for 24 h (about 150 bytes each: 10,000 ≈ 1.5 MB per client at the default, 150 MB at
 * the ceiling). The minute limit may go as high, so that a benchmark can run unthrottled.
 */
export const RATE_LIMIT_CONFIG = {
  RATE_LIMIT_PER_MINUTE: int(
    'requests one client_id may make in any rolling 60 s, summed over every app and replica',
    { default: '600', min: 1, max: 1_000_000 },
  ),
  RATE_LIMIT_PER_DAY: int(
    'requests one client_id may make in any rolling 24 h, summed over every app and replica',
    { default: '10000', min: 1, max: 1_000_000 },
  ),
} satisfies ConfigSpec;

export type RateLimitConfig = ConfigOf<typeof RATE_LIMIT_CONFIG>;

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

/** One sliding window: at most `limit` admitted requests in any rolling `windowMs`. */
export interface RateLimitWindow {
  readonly limit: number;
  readonly windowMs: number;
}

/**
 * The two windows every request is checked against. Outside tests they are 60 s and 24 h; tests
 * may shrink the lengths to watch a window slide without waiting a minute.
 */
export interface RateLimitPolicy {
  readonly minute: RateLimitWindow;
  readonly day: RateLimitWindow;
}

export function rateLimitPolicy(config: RateLimitConfig): RateLimitPolicy {
  return {
    minute: { limit: config.RATE_LIMIT_PER_MINUTE, windowMs: MINUTE_MS },
    day: { limit: config.RATE_LIMIT_PER_DAY, windowMs: DAY_MS },
  };
}

/**
 * The validated limits out of an app's config (loadConfigOrExit parsed and checked them at
 * start-up), or undefined when the app's spec does not include RATE_LIMIT_CONFIG. An app without
 * `/v1/*` routes (auth-server) meters nothing and need not declare them.
 */
export function rateLimitConfigOf(appConfig: object): RateLimitConfig | undefined {
  const { RATE_LIMIT_PER_MINUTE: perMinute, RATE_LIMIT_PER_DAY: perDay } =
    appConfig as Partial<RateLimitConfig>;
  if (perMinute === undefined && perDay === undefined) return undefined;
  if (!Number.isInteger(perMinute) || !Number.isInteger(perDay)) {
    throw new Error(
      "RATE_LIMIT_PER_MINUTE and RATE_LIMIT_PER_DAY come together: spread RATE_LIMIT_CONFIG into the app's config spec",
    );
  }
  return { RATE_LIMIT_PER_MINUTE: perMinute as number, RATE_LIMIT_PER_DAY: perDay as number };
}

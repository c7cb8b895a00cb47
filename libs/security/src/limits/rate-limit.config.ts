import { API_LIMITS } from '@svc/contracts';
import { int, type ConfigOf, type ConfigSpec } from '@svc/platform';

/**
 * The per-partner rate limits (docs/rules.md "Limits", "Rate limits"), spread into the config of
 * every app serving `/v1/*`; every app and replica must get the same values, as the buckets are
 * shared. The day limit bounds a client's bucket (about 10 bytes per request for 24 h).
 */
export const RATE_LIMIT_CONFIG = {
  RATE_LIMIT_PER_MINUTE: int(
    'requests one client_id may make in any rolling 60 s, summed over every app and replica',
    { default: String(API_LIMITS.ratePerMinute), min: 1, max: API_LIMITS.ratePerMinuteMax },
  ),
  RATE_LIMIT_PER_DAY: int(
    'requests one client_id may make in any rolling 24 h, summed over every app and replica',
    { default: String(API_LIMITS.ratePerDay), min: 1, max: API_LIMITS.ratePerDayMax },
  ),
} satisfies ConfigSpec;

export type RateLimitConfig = ConfigOf<typeof RATE_LIMIT_CONFIG>;

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

/**
 * Two sliding windows, each at most `limit` admitted requests in any rolling `windowMs`: outside
 * tests 60 s and 24 h; tests may shrink them to watch a window slide.
 */
export type RateLimitPolicy = Readonly<
  Record<'minute' | 'day', { readonly limit: number; readonly windowMs: number }>
>;

export function rateLimitPolicy(config: RateLimitConfig): RateLimitPolicy {
  return {
    minute: { limit: config.RATE_LIMIT_PER_MINUTE, windowMs: MINUTE_MS },
    day: { limit: config.RATE_LIMIT_PER_DAY, windowMs: DAY_MS },
  };
}

/** The app's validated limits, or undefined for an app without `/v1/*` routes that declares none. */
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

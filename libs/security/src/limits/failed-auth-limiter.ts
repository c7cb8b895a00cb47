import {
  addressLimitKey,
  ApiProblem,
  CLIENT_IPV6_PREFIX,
  duration,
  int,
  loadConfig,
  type AppEnv,
  type ConfigOf,
  type RedisClient,
} from '@svc/platform';
import type { Logger } from 'pino';
import { clientAddress } from './client-address';

/**
 * Failed authentications (bearer tokens, or client credentials) one client address may make in a
 * window before its requests get 429. The sandbox is generous: a partner's test suite runs from
 * one address, with bad tokens or secrets on purpose, and must never be refused.
 */
export const FAILED_AUTH_CONFIG = {
  AUTH_FAILURES_PER_ADDRESS: int(
    'failed bearer-token authentications one client address may make per AUTH_FAILURE_WINDOW before it gets 429',
    { default: '600', sandboxDefault: '100000', min: 1, max: 100_000_000 },
  ),
  CLIENT_AUTH_FAILURES_PER_ADDRESS: int(
    'failed client authentications (Basic, client_secret) one client address may make per AUTH_FAILURE_WINDOW before it gets 429',
    { default: '60', sandboxDefault: '100000', min: 1, max: 100_000_000 },
  ),
  AUTH_FAILURE_WINDOW: duration('window of the failed-authentication limits, from the first failure', {
    default: '10m',
  }),
  CLIENT_IPV6_PREFIX,
};

export type FailedAuthConfig = ConfigOf<typeof FAILED_AUTH_CONFIG>;

/** The config of an app that spread FAILED_AUTH_CONFIG into its spec, else the defaults of its APP_ENV. */
export function failedAuthConfigOf(appConfig: object): FailedAuthConfig {
  const config = appConfig as Partial<FailedAuthConfig> & { APP_ENV?: AppEnv };
  const keys = Object.keys(FAILED_AUTH_CONFIG) as (keyof FailedAuthConfig)[];
  if (keys.every((key) => config[key] !== undefined)) return config as FailedAuthConfig;
  return loadConfig(FAILED_AUTH_CONFIG, { APP_ENV: config.APP_ENV });
}

/** Bearer tokens, or a partner's client credentials (Basic or client_secret_post). */
export type FailedAuthKind = 'bearer' | 'client';

/** One counter per address and kind, the address as hash tag (one slot on a Redis Cluster). */
export function failedAuthKey(kind: FailedAuthKind, address: string | undefined): string {
  return `authfail:{${address ?? 'unknown'}}:${kind}`;
}

/** Counts one failure; the window (ARGV, ms) starts at the first. Returns { count, ms left }. */
const RECORD_FAILURE_LUA = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return { count, ttl }
`;

/** How many addresses a replica remembers as refused; beyond it, the expired ones are forgotten. */
const MAX_REMEMBERED = 10_000;
const WARN_EVERY_MS = 60_000;

/**
 * The failed-authentication limit per client address, counted in Redis by every replica.
 *
 * Checked without a Redis call, before any expensive work: a replica refuses an address it has
 * itself seen go over the limit, until the window ends (across n replicas at most n - 1 failures
 * more), so requests that authenticate cost nothing extra.
 *
 * Redis unavailable: fail open. The credentials are still checked on every request; failing
 * closed would turn every mistyped token into a 503.
 */
export class FailedAuthLimiter {
  private readonly refusedUntil = new Map<string, number>();
  private lastWarning = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly redis: RedisClient,
    private readonly config: FailedAuthConfig,
    private readonly logger?: Logger,
    private readonly now: () => number = Date.now,
  ) {
    if (!(config.AUTH_FAILURE_WINDOW >= 1000)) throw new Error('AUTH_FAILURE_WINDOW must be at least 1s');
  }

  /** IPv6 clients count by their network (CLIENT_IPV6_PREFIX), not by each of its addresses. */
  private keyOf(kind: FailedAuthKind, address: string | undefined): string {
    return failedAuthKey(kind, addressLimitKey(address, this.config.CLIENT_IPV6_PREFIX));
  }

  /**
   * Runs `authenticate` under the limit: refused first when the request's address is over it,
   * counted when it throws what `isFailure` calls a failed authentication.
   */
  async limit<T>(
    kind: FailedAuthKind,
    request: Parameters<typeof clientAddress>[0],
    authenticate: () => Promise<T>,
    isFailure: (err: unknown) => boolean,
  ): Promise<T> {
    // While this replica refuses no address, a request that authenticates needs no address at all.
    if (this.refusedUntil.size > 0) this.check(kind, clientAddress(request));
    try {
      return await authenticate();
    } catch (err) {
      if (isFailure(err)) await this.recordFailure(kind, clientAddress(request));
      throw err;
    }
  }

  /** Throws 429 `rate_limit_exceeded` (with Retry-After) for an address over its limit. */
  check(kind: FailedAuthKind, address: string | undefined): void {
    const key = this.keyOf(kind, address);
    const until = this.refusedUntil.get(key);
    if (until === undefined) return;
    const waitMs = until - this.now();
    if (waitMs <= 0) {
      this.refusedUntil.delete(key);
      return;
    }
    const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
    throw new ApiProblem(
      'rate_limit_exceeded',
      `Too many failed authentications came from this address; retry after ${retryAfter} second${retryAfter === 1 ? '' : 's'}.`,
      { headers: { 'retry-after': String(retryAfter) } },
    );
  }

  /** Counts a failed authentication of the address; never rejects (fail open, see the class). */
  async recordFailure(kind: FailedAuthKind, address: string | undefined): Promise<void> {
    const key = this.keyOf(kind, address);
    let reply: unknown;
    try {
      reply = await this.redis.eval(RECORD_FAILURE_LUA, 1, key, this.config.AUTH_FAILURE_WINDOW);
    } catch (err) {
      const at = this.now();
      if (at - this.lastWarning >= WARN_EVERY_MS) {
        this.lastWarning = at;
        this.logger?.warn(
          { err: err instanceof Error ? err.message : String(err) },
          'failed-authentication limit cannot count (Redis unavailable); not limiting meanwhile',
        );
      }
      return;
    }
    const [count, ttlMs] = reply as [number, number];
    const { AUTH_FAILURES_PER_ADDRESS: bearer, CLIENT_AUTH_FAILURES_PER_ADDRESS: client } = this.config;
    if (count >= (kind === 'bearer' ? bearer : client)) this.refuse(key, this.now() + Math.max(1, ttlMs));
  }

  private refuse(key: string, until: number): void {
    if (this.refusedUntil.size >= MAX_REMEMBERED) {
      const at = this.now();
      for (const [k, u] of this.refusedUntil) if (u <= at) this.refusedUntil.delete(k);
      // Still full: the oldest entries go first (a Map keeps insertion order).
      for (const k of this.refusedUntil.keys()) {
        if (this.refusedUntil.size < MAX_REMEMBERED) break;
        this.refusedUntil.delete(k);
      }
    }
    this.refusedUntil.delete(key);
    this.refusedUntil.set(key, until);
  }
}

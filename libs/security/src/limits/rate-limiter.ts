import { DependencyUnavailableError, isRedisUnavailable, type RedisClient } from '@svc/platform';
import type { RateLimitPolicy } from './rate-limit.config';
import { decide, type RateLimitDecision } from './rate-limit-decision';
import { RATE_LIMIT_LUA, RATE_LIMIT_SHA, rateLimitKey } from './rate-limit.script';

/**
 * Checks and records one request of a client (a refused one is not recorded); rejects with
 * DependencyUnavailableError when the shared counter cannot be asked (503, fail closed).
 */
export abstract class RateLimiter {
  abstract consume(clientId: string): Promise<RateLimitDecision>;

  /**
   * A bearer request, in the same atomic step: undefined, and not counted, when its token's
   * `tombstone` key exists; otherwise the decision and the client's state generation (read from
   * `generation`, set when missing). Both keys must share the client's hash tag.
   */
  abstract consumeForToken(clientId: string, keys: TokenKeys): Promise<TokenCount | undefined>;

  /**
   * The limits' tier a client is counted under, for the refusals metric. Every partner gets the
   * same RATE_LIMIT_PER_MINUTE / RATE_LIMIT_PER_DAY today: one tier, `standard`.
   */
  tierOf(_clientId: string): string {
    return 'standard';
  }
}

export interface TokenKeys {
  readonly tombstone: string;
  readonly generation: string;
}

/** A bearer request counted: the decision, and the generation of the client's state in Redis. */
export interface TokenCount {
  readonly decision: RateLimitDecision;
  readonly generation: string;
}

const US_PER_MS = 1000;

function assertPolicy(policy: RateLimitPolicy): void {
  for (const [name, w] of Object.entries(policy)) {
    if (!Number.isInteger(w.limit) || w.limit < 1)
      throw new Error(`${name} limit must be a positive integer`);
    if (!Number.isInteger(w.windowMs) || w.windowMs < 1) {
      throw new Error(`${name} window must be a positive number of milliseconds`);
    }
  }
  // The script trims the store to the day window: a longer minute window would lose entries.
  if (policy.day.windowMs < policy.minute.windowMs) throw new Error('the day window must not be shorter');
}

/**
 * The rate limiter every app and replica shares: one Lua script call per request (RATE_LIMIT_LUA).
 *
 * Redis unavailable: fail closed, 503. The limits are exact promises (docs/rules.md) that only
 * the shared counter can keep across replicas; a per-replica fallback would multiply them.
 */
export class RedisRateLimiter extends RateLimiter {
  private readonly windowArgs: readonly string[];

  constructor(
    private readonly redis: RedisClient,
    readonly policy: RateLimitPolicy,
  ) {
    super();
    assertPolicy(policy);
    const { minute, day } = policy;
    this.windowArgs = [minute.limit, minute.windowMs * US_PER_MS, day.limit, day.windowMs * US_PER_MS].map(
      String,
    );
  }

  async consume(clientId: string): Promise<RateLimitDecision> {
    return (await this.run(clientId, []))!.decision;
  }

  consumeForToken(clientId: string, keys: TokenKeys): Promise<TokenCount | undefined> {
    return this.run(clientId, [keys.tombstone, keys.generation]);
  }

  private async run(clientId: string, tokenKeys: readonly string[]): Promise<TokenCount | undefined> {
    const keys = [rateLimitKey(clientId), ...tokenKeys];
    const args = [...keys, ...this.windowArgs];
    let reply: unknown;
    try {
      reply = await this.redis.evalsha(RATE_LIMIT_SHA, keys.length, ...args).catch((err: unknown) => {
        // NOSCRIPT: this Redis has not cached the script (first use, restart, failover, SCRIPT FLUSH).
        // EVAL runs it and caches it; nothing was counted by the failed EVALSHA.
        if (err instanceof Error && err.name === 'ReplyError' && err.message.startsWith('NOSCRIPT')) {
          return this.redis.eval(RATE_LIMIT_LUA, keys.length, ...args);
        }
        throw err;
      });
    } catch (err) {
      // Any error reply other than unavailability is a fault in this code (a logged 500).
      // Down, unreachable, over its 1 s timeout, loading…: the request fails closed (503).
      throw isRedisUnavailable(err) ? new DependencyUnavailableError('redis (rate limiter)', err) : err;
    }
    return this.toCount(reply, tokenKeys.length > 0);
  }

  private toCount(reply: unknown, withGeneration: boolean): TokenCount | undefined {
    if (withGeneration && Array.isArray(reply) && reply.length === 1 && reply[0] === -1) return undefined;
    const numbers = Array.isArray(reply) ? reply.slice(0, 6) : [];
    const generation: unknown = withGeneration && Array.isArray(reply) ? reply[6] : '';
    if (
      numbers.length !== 6 ||
      !numbers.every((n) => Number.isSafeInteger(n)) ||
      (reply as unknown[]).length !== (withGeneration ? 7 : 6) ||
      typeof generation !== 'string'
    ) {
      throw new Error(`unexpected reply from the rate limit script: ${JSON.stringify(reply)}`);
    }
    const [admitted, nowUs, minuteCount, minuteNextFreeUs, dayCount, dayNextFreeUs] = numbers as number[];
    const decision = decide(admitted === 1, nowUs, {
      minute: { limit: this.policy.minute.limit, count: minuteCount, nextFreeUs: minuteNextFreeUs },
      day: { limit: this.policy.day.limit, count: dayCount, nextFreeUs: dayNextFreeUs },
    });
    return { decision, generation };
  }
}

/**
 * The limiter of an app without RATE_LIMIT_CONFIG (auth-server's `/oauth/userinfo` is not
 * metered): a metered route there is a wiring mistake, a logged 500.
 */
export class UnconfiguredRateLimiter extends RateLimiter {
  async consumeForToken(): Promise<TokenCount> {
    return { decision: await this.consume(), generation: '' };
  }

  consume(): Promise<RateLimitDecision> {
    return Promise.reject(
      new Error(
        "a /v1/* route is rate-limited, but the app's config spec lacks RATE_LIMIT_CONFIG from @svc/security",
      ),
    );
  }
}

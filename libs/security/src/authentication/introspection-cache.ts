import { Inject, Injectable } from '@nestjs/common';
import {
  AUTH_INTROSPECT,
  INTROSPECTION_CACHE_MAX_TTL_SECONDS,
  INTROSPECTION_TOMBSTONE_TTL_SECONDS,
  introspectionCacheKey,
  partnerTombstoneKey,
  stateGenerationKey,
  type CachedIntrospection,
} from '@svc/contracts';
import { DependencyUnavailableError, REDIS, REDIS_CACHE, type RedisClient } from '@svc/platform';
import Redis from 'ioredis';

/** Redis did not answer or confirm a write: a 503 (retry) if it reaches the Problem filter. */
export class IntrospectionCacheUnavailableError extends DependencyUnavailableError {
  constructor(cause?: unknown) {
    super('redis (introspection cache)', cause);
    this.name = 'IntrospectionCacheUnavailableError';
  }
}

/** How long a revocation waits for a replica to confirm its tombstones (behind Sentinel). */
const TOMBSTONE_REPLICA_WAIT_MS = 500;

/** Bounds the commands in flight when a suspension revokes a partner's every token. */
const TOMBSTONE_BATCH = 500;

/** As long as the rate limiter keeps a partner's generation (its day window, by default). */
const GENERATION_TTL_MS = 86_400_000;

/**
 * A route that is not metered (`/oauth/userinfo`) checks a token as the rate limit script does,
 * without counting: nil when the partner-tagged tombstone (KEYS[1]) exists, else the partner's
 * generation (KEYS[2]), set to the Redis clock in µs when missing, as that script sets it.
 */
const LIVE_GENERATION_LUA = `
if redis.call('EXISTS', KEYS[1]) == 1 then return false end
local generation = redis.call('GET', KEYS[2])
if not generation then
  local clock = redis.call('TIME')
  generation = string.format('%d', tonumber(clock[1]) * 1000000 + tonumber(clock[2]))
  redis.call('SET', KEYS[2], generation, 'PX', ARGV[1])
end
return generation
`;

/**
 * An answer as the cache Redis keeps it, with the partner's state generation it was stored under
 * when the reader that stored it knew it: a reader that meets another one asks auth-server.
 */
export type StampedIntrospection = CachedIntrospection & { readonly generation?: string };

/**
 * An active answer is cached at most INTROSPECTION_CACHE_MAX_TTL_SECONDS and never past its
 * expiry, but at least the 1 s Redis requires; an inactive one the full maximum.
 */
export function introspectionTtlSeconds(answer: CachedIntrospection, nowMs: number): number {
  if (!answer.active) return INTROSPECTION_CACHE_MAX_TTL_SECONDS;
  const remaining = Math.floor((Date.parse(answer.expires_at) - nowMs) / 1000);
  if (Number.isNaN(remaining)) return 1;
  return Math.max(1, Math.min(INTROSPECTION_CACHE_MAX_TTL_SECONDS, remaining));
}

/**
 * The Redis side of `libs/contracts/src/introspection.ts`. Answers live in the evictable cache
 * Redis; tombstones in the state Redis (noeviction), so losing the cache can never bring a
 * revoked token back.
 */
@Injectable()
export class IntrospectionCache {
  /**
   * The state Redis server answering now (`INFO server` run_id): after a failover or restart, what
   * the old server said (not revoked) must not be trusted against the new one (see `stamp`).
   * Undefined between a close and the new run_id. A Cluster is a constant (failovers inside it:
   * docs/security.md).
   */
  private stateServer: string | undefined;
  /** The last run_id read, kept across a reconnection, to tell a new server from the same one. */
  private knownServer: string | undefined;
  /** Closes of the state Redis connection so far. */
  private closes = 0;
  private readonly serverChanged: (() => void)[] = [];

  constructor(
    @Inject(REDIS_CACHE) private readonly cache: RedisClient,
    @Inject(REDIS) private readonly state: RedisClient,
  ) {
    if (!(state instanceof Redis)) {
      this.stateServer = 'cluster';
      return;
    }
    state.on('close', () => {
      this.closes += 1;
      this.stateServer = undefined;
    });
    state.on('ready', () => void this.readStateServer(state));
    if (state.status === 'ready') void this.readStateServer(state);
  }

  private async readStateServer(state: Redis): Promise<void> {
    const closes = this.closes;
    let info: string;
    try {
      info = await state.info('server');
    } catch {
      return; // the next 'ready' reads it again; until then nothing is trusted
    }
    const runId = /^run_id:([0-9a-f]+)\r?$/m.exec(info)?.[1];
    // A close since the question was asked: the answer may be the old server's.
    if (!runId || closes !== this.closes) return;
    const previous = this.knownServer;
    this.stateServer = this.knownServer = runId;
    if (previous !== undefined && previous !== runId) for (const listener of this.serverChanged) listener();
  }

  /**
   * A partner's state generation as a reader compares it: with the state Redis server that
   * answered, so that an answer or a memory stamped before a failover (to a replica that may have
   * missed a tombstone) or a restart never matches after it, although the generation key itself
   * was replicated. Undefined while the server is not known (reconnecting): nothing matches.
   */
  stamp(generation: string): string | undefined {
    return this.stateServer === undefined ? undefined : `${generation}@${this.stateServer}`;
  }

  /** Called when the state Redis is found to be another server than before (failover, restart). */
  onStateServerChange(listener: () => void): void {
    this.serverChanged.push(listener);
  }

  /**
   * For a route that is not metered: the partner's generation (stamped), or null when the token's
   * partner-tagged tombstone exists. One script call in the partner's slot.
   */
  async liveGeneration(clientId: string, digest: string): Promise<string | undefined | null> {
    let reply: unknown;
    try {
      reply = await this.state.eval(
        LIVE_GENERATION_LUA,
        2,
        partnerTombstoneKey(clientId, digest),
        stateGenerationKey(clientId),
        GENERATION_TTL_MS,
      );
    } catch (err) {
      throw new IntrospectionCacheUnavailableError(err);
    }
    if (reply === null) return null;
    if (typeof reply !== 'string') throw new Error(`unexpected reply ${JSON.stringify(reply)}`);
    return this.stamp(reply);
  }

  /**
   * The cached answer, or undefined on a miss (an entry that does not parse is one); the cache
   * Redis not answering throws. A live answer is not the last word: the token's tombstone, under
   * the client_id the answer names, is checked next in the state Redis (the rate limiter's script
   * on a metered route, `liveGeneration` otherwise), and wins over it.
   */
  async get(digest: string): Promise<StampedIntrospection | undefined> {
    let answer: string | null;
    try {
      answer = await this.cache.get(introspectionCacheKey(digest));
    } catch (err) {
      throw new IntrospectionCacheUnavailableError(err);
    }
    if (answer === null) return undefined;
    try {
      const stored = JSON.parse(answer) as { generation?: unknown };
      const parsed = AUTH_INTROSPECT.parseResponse(stored);
      return typeof stored.generation === 'string' ? { ...parsed, generation: stored.generation } : parsed;
    } catch {
      return undefined;
    }
  }

  /**
   * SET EX NX: of concurrent misses the first answer stays. One read before a revocation
   * committed may land after its tombstone, which outlives it and wins at every read.
   */
  async putIfAbsent(digest: string, answer: StampedIntrospection, nowMs = Date.now()): Promise<boolean> {
    const ttl = introspectionTtlSeconds(answer, nowMs);
    try {
      const stored = await this.cache.set(
        introspectionCacheKey(digest),
        JSON.stringify(answer),
        'EX',
        ttl,
        'NX',
      );
      return stored === 'OK';
    } catch (err) {
      throw new IntrospectionCacheUnavailableError(err);
    }
  }

  /**
   * auth-server calls this BEFORE committing a revocation and rolls back when it throws; readers
   * check the tombstone on every lookup, so the cache Redis is not touched. One SET per key, not
   * MULTI: the keys of several partners hash to slots all over a Cluster (CROSSSLOT); a partial
   * write rolls the revocation back for a retry, and its tombstones only fail closed early. Behind
   * Sentinel they must also reach a replica (WAIT): one held only by a failing primary would be
   * lost with it. A primary with no replica attached has nothing to lose it to.
   */
  async tombstone(clientId: string, digests: readonly string[]): Promise<void> {
    await this.tombstoneEach(digests.map((digest) => ({ clientId, digest })));
  }

  /**
   * `tombstone` for tokens of several partners at once: one pipelined write (and one WAIT) for
   * every token, as for the rotations of one group commit of refreshes.
   */
  async tombstoneEach(
    tokens: readonly { readonly clientId: string; readonly digest: string }[],
  ): Promise<void> {
    const keys = tokens.map(({ clientId, digest }) => partnerTombstoneKey(clientId, digest));
    for (let i = 0; i < keys.length; i += TOMBSTONE_BATCH) {
      const replies = await Promise.allSettled(
        keys
          .slice(i, i + TOMBSTONE_BATCH)
          .map((key) => this.state.set(key, '1', 'EX', INTROSPECTION_TOMBSTONE_TTL_SECONDS)),
      );
      for (const reply of replies) {
        if (reply.status === 'rejected') throw new IntrospectionCacheUnavailableError(reply.reason);
        if (reply.value !== 'OK') {
          throw new IntrospectionCacheUnavailableError(new Error(`unexpected reply ${String(reply.value)}`));
        }
      }
    }
    // A Sentinel-managed primary has a replica by construction, the one a failover promotes.
    const redis = this.state;
    if (tokens.length === 0 || !(redis instanceof Redis) || !redis.options.sentinels?.length) return;
    let attached: number;
    try {
      // Within the client's 1 s command timeout; WAIT covers every write sent before it on this connection.
      if ((await redis.wait(1, TOMBSTONE_REPLICA_WAIT_MS)) >= 1) return;
      // ROLE on a primary: ['master', offset, [[host, port, offset], …]], its attached replicas.
      const role = (await redis.role()) as [string, number, unknown[]?];
      attached = Array.isArray(role[2]) ? role[2].length : 0;
    } catch (err) {
      throw new IntrospectionCacheUnavailableError(err);
    }
    if (attached > 0) {
      throw new IntrospectionCacheUnavailableError(
        new Error(`no replica confirmed the tombstones within ${TOMBSTONE_REPLICA_WAIT_MS} ms`),
      );
    }
  }
}

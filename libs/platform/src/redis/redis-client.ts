import Redis, { Cluster, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { ConfigOf, REDIS_CONFIG } from '../config/config';

/**
 * Exactly one of REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES is set (REDIS_CONFIG checks
 * it at start-up). The other fields are optional so that a `{ REDIS_URL, REDIS_KEY_PREFIX }`
 * literal (scripts, tests) is a whole config.
 */
export type RedisConfig = Partial<ConfigOf<typeof REDIS_CONFIG>> & {
  readonly REDIS_KEY_PREFIX: string | undefined;
};

/** A single server, a Sentinel-managed primary (both `Redis`) or a Cluster. */
export type RedisClient = Redis | Cluster;

/**
 * The state Redis (noeviction): rate-limit windows, sign-in counters, revocation tombstones,
 * anything whose loss would admit what must be refused.
 */
export const REDIS = Symbol('REDIS');

/**
 * The cache Redis (an evicting policy): token-introspection answers, which can always be asked
 * again. The state Redis itself when no REDIS_CACHE_* topology is set.
 */
export const REDIS_CACHE = Symbol('REDIS_CACHE');

/** Replies that mean "this node cannot serve the command now" rather than a fault of ours. */
export const REDIS_UNAVAILABLE_REPLIES =
  /^(LOADING|BUSY|READONLY|MASTERDOWN|OOM|TRYAGAIN|CLUSTERDOWN|NOREPLICAS|MISCONF|MOVED|ASK)\b/;

/** Connection failures, timeouts and the replies above: Redis is away, as opposed to a bug. */
export function isRedisUnavailable(err: unknown): boolean {
  return !(err instanceof Error) || err.name !== 'ReplyError' || REDIS_UNAVAILABLE_REPLIES.test(err.message);
}

/**
 * Commands fail fast when Redis is away (no offline queue, one retry, short timeouts): callers
 * decide what an unavailable Redis means for them, and none of them waits on it.
 *
 * Auto-pipelining sends the commands that concurrent requests issue in one turn of the event loop
 * in one write, which lowers both Redis's CPU per request and the app's (docs/architecture.md).
 * Each command keeps its own reply, error and timeout. On a Cluster, ioredis pipelines per node.
 */
const FAIL_FAST = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  connectTimeout: 2000,
  commandTimeout: 1000,
} satisfies RedisOptions;

/**
 * After a Sentinel failover the old primary answers writes with READONLY until the client moves:
 * reconnecting (without resending, the command already failed) asks the sentinels again. The
 * sentinels also close the old primary's clients, so this is the slower of two paths.
 */
const reconnectOnReadOnly = (err: Error) => (err.message.startsWith('READONLY') ? 1 : false);

export function createRedis(config: RedisConfig & { REDIS_URL: string }): Redis;
export function createRedis(config: RedisConfig): RedisClient;
export function createRedis(config: RedisConfig): RedisClient {
  const keyPrefix = config.REDIS_KEY_PREFIX ?? '';
  const retryStrategy = (times: number) => Math.min(times * 200, 5000);
  if (config.REDIS_CLUSTER_NODES) {
    const options: ClusterOptions = {
      keyPrefix,
      enableOfflineQueue: false,
      enableAutoPipelining: true,
      clusterRetryStrategy: retryStrategy,
      // A moved slot or a failed-over primary: fetch the slot map again soon, not every 5 s.
      slotsRefreshTimeout: 1000,
      retryDelayOnFailover: 100,
      retryDelayOnClusterDown: 100,
      redisOptions: { ...FAIL_FAST, password: config.REDIS_PASSWORD, reconnectOnError: reconnectOnReadOnly },
    };
    return new Cluster([...config.REDIS_CLUSTER_NODES], options);
  }
  const common: RedisOptions = {
    ...FAIL_FAST,
    keyPrefix,
    lazyConnect: false,
    enableAutoPipelining: true,
    retryStrategy,
    reconnectOnError: reconnectOnReadOnly,
  };
  if (config.REDIS_SENTINELS) {
    return new Redis({
      ...common,
      sentinels: [...config.REDIS_SENTINELS],
      name: config.REDIS_SENTINEL_MASTER ?? 'mymaster',
      password: config.REDIS_PASSWORD,
      role: 'master',
      // No failoverDetector: with it, a client whose primary was killed ends (status `end`, every
      // command refused for good) and quit() leaves its sentinel subscriptions open (ioredis#1362).
      // Without it the client reconnects and asks the sentinels again (the Redis failover drill).
      sentinelRetryStrategy: retryStrategy,
    });
  }
  if (!config.REDIS_URL)
    throw new Error('no Redis configured: REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES');
  return new Redis(config.REDIS_URL, common);
}

/** The cache Redis as a config of its own, or undefined when it shares the state Redis. */
export function cacheRedisConfig(config: RedisConfig): RedisConfig | undefined {
  if (!config.REDIS_CACHE_URL && !config.REDIS_CACHE_SENTINELS && !config.REDIS_CACHE_CLUSTER_NODES)
    return undefined;
  return {
    REDIS_URL: config.REDIS_CACHE_URL,
    REDIS_SENTINELS: config.REDIS_CACHE_SENTINELS,
    REDIS_SENTINEL_MASTER: config.REDIS_CACHE_SENTINEL_MASTER,
    REDIS_CLUSTER_NODES: config.REDIS_CACHE_CLUSTER_NODES,
    REDIS_PASSWORD: config.REDIS_CACHE_PASSWORD,
    REDIS_KEY_PREFIX: config.REDIS_KEY_PREFIX,
  };
}

/** The variable that points at the state Redis, for messages. */
export function stateRedisVariable(config: RedisConfig): string {
  if (config.REDIS_CLUSTER_NODES) return 'REDIS_CLUSTER_NODES';
  if (config.REDIS_SENTINELS) return 'REDIS_SENTINELS';
  return 'REDIS_URL';
}

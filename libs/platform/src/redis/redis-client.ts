import Redis, { Cluster, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { ConfigOf, REDIS_CONFIG } from '../config/config';

/** One of REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES is set; `{ REDIS_URL, REDIS_KEY_PREFIX }` is a whole config. */
export type RedisConfig = Partial<ConfigOf<typeof REDIS_CONFIG>> & {
  readonly REDIS_KEY_PREFIX: string | undefined;
};

/** A single server, a Sentinel-managed primary (both `Redis`) or a Cluster. */
export type RedisClient = Redis | Cluster;

/** The state Redis (noeviction): limiter windows, sign-in counters, tombstones: a lost key admits what must be refused. */
export const REDIS = Symbol('REDIS');

/** The cache Redis (evicting): introspection answers; the state Redis when no REDIS_CACHE_* is set. */
export const REDIS_CACHE = Symbol('REDIS_CACHE');

/** Replies that mean "this node cannot serve the command now" rather than a fault of ours. */
export const REDIS_UNAVAILABLE_REPLIES =
  /^(LOADING|BUSY|READONLY|MASTERDOWN|OOM|TRYAGAIN|CLUSTERDOWN|NOREPLICAS|MISCONF|MOVED|ASK)\b/;

/** Connection failures, timeouts and the replies above: Redis is away, as opposed to a bug. */
export function isRedisUnavailable(err: unknown): boolean {
  return !(err instanceof Error) || err.name !== 'ReplyError' || REDIS_UNAVAILABLE_REPLIES.test(err.message);
}

/**
 * Commands fail fast when Redis is away: callers decide what that means, none waits. Auto-pipelining
 * sends one event-loop turn's commands in one write (docs/architecture.md).
 */
const FAIL_FAST = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  connectTimeout: 2000,
  commandTimeout: 1000,
} satisfies RedisOptions;

/** After a Sentinel failover the old primary answers READONLY: reconnecting asks the sentinels again. */
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

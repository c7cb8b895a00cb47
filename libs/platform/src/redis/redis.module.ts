import { Global, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import { ConfigError, type AppEnv } from '../config/config';
import { exitOnConfigError } from '../config/env';
import { ReadinessRegistry } from '../health/readiness';
import { APP_CONFIG, APP_LOGGER, APP_NAME } from '../platform.module';
import { EvictionPolicyCheck } from './eviction-policy';
import {
  cacheRedisConfig,
  createRedis,
  REDIS,
  REDIS_CACHE,
  type RedisClient,
  type RedisConfig,
} from './redis-client';

class RedisLifecycle implements OnApplicationShutdown {
  constructor(private readonly clients: ReadonlySet<RedisClient>) {}
  async onApplicationShutdown() {
    await Promise.all([...this.clients].map((c) => c.quit().catch(() => c.disconnect())));
  }
}

type AppConfig = RedisConfig & { readonly APP_ENV?: AppEnv };

/** Both Redis roles, each a readiness dependency; the state Redis's eviction policy is judged before ready. */
@Global()
@Module({})
export class RedisModule {
  static forRoot(): DynamicModule {
    return {
      module: RedisModule,
      providers: [
        {
          provide: REDIS,
          inject: [APP_CONFIG, ReadinessRegistry, APP_LOGGER, APP_NAME],
          useFactory: (config: AppConfig, readiness: ReadinessRegistry, logger: Logger, app: string) => {
            const redis = createRedis(config);
            redis.on('error', () => undefined); // state is reported by /readyz, not by log floods
            const policy = new EvictionPolicyCheck(redis, {
              // Without APP_ENV an app runs as production (BASE_CONFIG).
              appEnv: config.APP_ENV ?? 'production',
              variable: config.REDIS_CLUSTER_NODES
                ? 'REDIS_CLUSTER_NODES'
                : config.REDIS_SENTINELS
                  ? 'REDIS_SENTINELS'
                  : 'REDIS_URL',
              logger,
              refuse: (variable, reason) => exitOnConfigError(app, new ConfigError([{ variable, reason }])),
            });
            // At the first connection, not only when something polls /readyz.
            redis.on('ready', () => void policy.verify().catch(() => undefined));
            readiness.register('redis', async () => {
              await redis.ping();
              await policy.verify();
            });
            return redis;
          },
        },
        {
          provide: REDIS_CACHE,
          inject: [APP_CONFIG, ReadinessRegistry, REDIS],
          useFactory: (config: RedisConfig, readiness: ReadinessRegistry, state: RedisClient) => {
            const cacheConfig = cacheRedisConfig(config);
            if (cacheConfig === undefined) return state;
            const cache = createRedis(cacheConfig);
            cache.on('error', () => undefined);
            readiness.register('redis-cache', async () => {
              await cache.ping();
            });
            return cache;
          },
        },
        {
          provide: RedisLifecycle,
          inject: [REDIS, REDIS_CACHE],
          useFactory: (state: RedisClient, cache: RedisClient) => new RedisLifecycle(new Set([state, cache])),
        },
      ],
      exports: [REDIS, REDIS_CACHE],
    };
  }
}

import { Global, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import { ReadinessRegistry } from '../health/readiness';
import { APP_CONFIG } from '../platform.module';

export interface RedisConfig {
  readonly REDIS_URL: string;
  readonly REDIS_KEY_PREFIX: string | undefined;
}

export const REDIS = Symbol('REDIS');

/**
 * Commands fail fast when Redis is away (no offline queue, one retry, short timeouts): callers
 * decide what an unavailable Redis means for them, and none of them waits on it.
 *
 * Auto-pipelining sends the commands that concurrent requests issue in one turn of the event loop
 * in one write: measured on `/v1/me` under load, Redis CPU per request fell from 56 to 40 µs and
 * the app's with it. Each command keeps its own reply, error and timeout.
 */
export function createRedis(config: RedisConfig): Redis {
  return new Redis(config.REDIS_URL, {
    keyPrefix: config.REDIS_KEY_PREFIX ?? '',
    lazyConnect: false,
    enableOfflineQueue: false,
    enableAutoPipelining: true,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    commandTimeout: 1000,
    retryStrategy: (times) => Math.min(times * 200, 5000),
  });
}

class RedisLifecycle implements OnApplicationShutdown {
  constructor(private readonly redis: Redis) {}
  async onApplicationShutdown() {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

@Global()
@Module({})
export class RedisModule {
  static forRoot(): DynamicModule {
    return {
      module: RedisModule,
      providers: [
        {
          provide: REDIS,
          inject: [APP_CONFIG, ReadinessRegistry],
          useFactory: (config: RedisConfig, readiness: ReadinessRegistry) => {
            const redis = createRedis(config);
            redis.on('error', () => undefined); // state is reported by /readyz, not by log floods
            readiness.register('redis', async () => {
              await redis.ping();
            });
            return redis;
          },
        },
        { provide: RedisLifecycle, inject: [REDIS], useFactory: (r: Redis) => new RedisLifecycle(r) },
      ],
      exports: [REDIS],
    };
  }
}

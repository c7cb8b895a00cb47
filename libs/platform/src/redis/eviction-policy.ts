import { Cluster } from 'ioredis';
import type { Logger } from 'pino';
import type { AppEnv } from '../config/config';
import { isRedisUnavailable, type RedisClient } from './redis-client';

/** The one policy that refuses a write instead of dropping a key (volatile-* drops ours too: they have TTLs). */
export const NO_EVICTION = 'noeviction';

export interface EvictionPolicyCheckOptions {
  readonly appEnv: AppEnv;
  /** The variable that points at the state Redis, named in the refusal. */
  readonly variable: string;
  readonly logger: Pick<Logger, 'warn'>;
  /** Production's answer to an evicting policy: the app refuses to start (exit 78). */
  readonly refuse: (variable: string, reason: string) => void;
}

/**
 * Checks once that the state Redis cannot evict (a dropped window, counter or tombstone admits
 * what must be refused, and anyone can fill memory). Production refuses an evicting policy, the
 * sandbox logs it; an unreadable policy (CONFIG forbidden) is logged once.
 */
export class EvictionPolicyCheck {
  private settled = false;
  private inFlight: Promise<void> | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly options: EvictionPolicyCheckOptions,
  ) {}

  /** Resolves once the policy was judged; rejects while Redis does not answer. */
  verify(): Promise<void> {
    if (this.settled) return Promise.resolve();
    this.inFlight ??= this.check().finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  private async check(): Promise<void> {
    const { appEnv, variable, logger, refuse } = this.options;
    let policies: string[];
    try {
      // Of the primary, or of every primary of a Cluster.
      const nodes = this.redis instanceof Cluster ? this.redis.nodes('master') : [this.redis];
      if (nodes.length === 0) throw new Error('no primary known yet');
      policies = await Promise.all(
        nodes.map(
          async (node) => ((await node.config('GET', 'maxmemory-policy')) as string[])[1] ?? 'unknown',
        ),
      );
    } catch (err) {
      if (isRedisUnavailable(err)) throw err;
      this.settled = true;
      logger.warn(
        { variable, reason: err instanceof Error ? err.message : String(err) },
        `cannot read maxmemory-policy of the state Redis (${variable}); it must be ${NO_EVICTION}`,
      );
      return;
    }
    this.settled = true;
    const evicting = policies.find((policy) => policy !== NO_EVICTION);
    if (evicting === undefined) return;
    const reason = `points at a Redis with maxmemory-policy ${evicting}; rate-limit windows, sign-in counters and revocation tombstones need ${NO_EVICTION}`;
    if (appEnv === 'production') refuse(variable, reason);
    else logger.warn({ variable, policy: evicting }, `${variable} ${reason}`);
  }
}

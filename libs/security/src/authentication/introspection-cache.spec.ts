import {
  INTROSPECTION_CACHE_MAX_TTL_SECONDS,
  INTROSPECTION_TOMBSTONE_TTL_SECONDS,
  type CachedIntrospection,
} from '@svc/contracts';
import type { RedisClient } from '@svc/platform';
import Redis from 'ioredis';
import {
  IntrospectionCache,
  IntrospectionCacheUnavailableError,
  introspectionTtlSeconds,
} from './introspection-cache';

const NOW = Date.parse('2030-01-01T00:00:00Z');
const activeUntil = (msFromNow: number): Extract<CachedIntrospection, { active: true }> => ({
  active: true,
  user_id: 'usr_1',
  client_id: 'sandbox-partner',
  scopes: [],
  expires_at: new Date(NOW + msFromNow).toISOString(),
});

describe('introspectionTtlSeconds', () => {
  it('caps an active answer at 60 s', () => {
    expect(introspectionTtlSeconds(activeUntil(3_600_000), NOW)).toBe(60);
  });

  it('never keeps an active answer past the token’s expiry (rounded down)', () => {
    expect(introspectionTtlSeconds(activeUntil(10_900), NOW)).toBe(10);
  });

  it('keeps at least 1 s, the least Redis accepts', () => {
    expect(introspectionTtlSeconds(activeUntil(400), NOW)).toBe(1);
    expect(introspectionTtlSeconds(activeUntil(-5_000), NOW)).toBe(1);
    expect(introspectionTtlSeconds({ ...activeUntil(0), expires_at: 'garbage' }, NOW)).toBe(1);
  });

  it('keeps an inactive answer 60 s', () => {
    expect(introspectionTtlSeconds({ active: false }, NOW)).toBe(60);
  });
});

/**
 * Just enough of ioredis for the failure paths real Redis cannot be made to produce on demand:
 * the cache Redis answers GET, the state Redis EVAL (the tombstone check) and SET (tombstones).
 */
function fakeRedis(behaviour: {
  get?: () => Promise<string | null>;
  eval?: (...args: unknown[]) => Promise<unknown>;
  set?: (key: string) => Promise<unknown>;
}) {
  const written: unknown[][] = [];
  const refuse = () => {
    throw new Error('not the Redis for this');
  };
  const cacheRedis = { get: behaviour.get ?? (async () => null), eval: refuse, set: refuse };
  const stateRedis = {
    get: refuse,
    exists: refuse,
    eval: behaviour.eval ?? refuse,
    set: (...args: unknown[]) => {
      written.push(args);
      return behaviour.set ? behaviour.set(String(args[0])) : Promise.resolve('OK');
    },
    multi: () => {
      throw new Error('MULTI over keys of many slots is refused by Redis Cluster (CROSSSLOT)');
    },
  };
  return {
    cache: new IntrospectionCache(cacheRedis as unknown as RedisClient, stateRedis as unknown as RedisClient),
    written,
  };
}

describe('IntrospectionCache', () => {
  it('reports an unreachable Redis on get as IntrospectionCacheUnavailableError', async () => {
    const { cache } = fakeRedis({
      get: () => Promise.reject(new Error("Stream isn't writeable and enableOfflineQueue options is false")),
    });
    await expect(cache.get('a'.repeat(64))).rejects.toBeInstanceOf(IntrospectionCacheUnavailableError);
  });

  it('reads only the cache Redis on get: the tombstone is checked after it, under the answer’s client_id', async () => {
    const { cache } = fakeRedis({ get: async () => JSON.stringify(activeUntil(3_600_000)) });
    await expect(cache.get('a'.repeat(64))).resolves.toMatchObject({
      active: true,
      client_id: 'sandbox-partner',
    });
  });

  it('counts an entry that does not parse as a miss (auth-server is then asked)', async () => {
    for (const raw of ['not json', '{"active":true}', '[]']) {
      const { cache } = fakeRedis({ get: async () => raw });
      await expect(cache.get('a'.repeat(64))).resolves.toBeUndefined();
    }
  });

  it('writes one tombstone per token, under the partner’s hash tag, to the state Redis with its own plain SET (no NX, no MULTI) and the tombstone TTL', async () => {
    const { cache, written } = fakeRedis({});
    await cache.tombstone('partner-a', ['a'.repeat(64), 'b'.repeat(64)]);
    expect(written).toEqual([
      [`revoked:{partner-a}:${'a'.repeat(64)}`, '1', 'EX', INTROSPECTION_TOMBSTONE_TTL_SECONDS],
      [`revoked:{partner-a}:${'b'.repeat(64)}`, '1', 'EX', INTROSPECTION_TOMBSTONE_TTL_SECONDS],
    ]);
  });

  it('writes the tombstones of several partners’ tokens each under its own partner, every SET sent before any reply (one pipelined write)', async () => {
    const { cache, written } = fakeRedis({});
    const done = cache.tombstoneEach([
      { clientId: 'partner-a', digest: 'a'.repeat(64) },
      { clientId: 'partner-b', digest: 'b'.repeat(64) },
    ]);
    expect(written.map((w) => w[0])).toEqual([
      `revoked:{partner-a}:${'a'.repeat(64)}`,
      `revoked:{partner-b}:${'b'.repeat(64)}`,
    ]);
    await done;
  });

  it('fails tombstoneEach when any of its writes fails', async () => {
    const { cache } = fakeRedis({
      set: (key) =>
        key.includes('{partner-b}')
          ? Promise.reject(new Error('Connection is closed.'))
          : Promise.resolve('OK'),
    });
    await expect(
      cache.tombstoneEach([
        { clientId: 'partner-a', digest: 'a'.repeat(64) },
        { clientId: 'partner-b', digest: 'b'.repeat(64) },
      ]),
    ).rejects.toBeInstanceOf(IntrospectionCacheUnavailableError);
  });

  it('checks an unmetered token’s tombstone under its partner’s hash tag, the key revocations write: null when it exists', async () => {
    const calls: unknown[][] = [];
    const { cache } = fakeRedis({
      eval: async (...args: unknown[]) => {
        calls.push(args);
        return null;
      },
    });
    await expect(cache.liveGeneration('partner-a', 'a'.repeat(64))).resolves.toBeNull();
    expect(calls[0].slice(1, 4)).toEqual([
      2,
      `revoked:{partner-a}:${'a'.repeat(64)}`,
      'generation:{partner-a}',
    ]);
  });

  it('throws when the state Redis cannot say whether a token is revoked', async () => {
    const { cache } = fakeRedis({ eval: () => Promise.reject(new Error('Connection is closed.')) });
    await expect(cache.liveGeneration('partner-a', 'a'.repeat(64))).rejects.toBeInstanceOf(
      IntrospectionCacheUnavailableError,
    );
  });

  it('keeps a tombstone longer than any answer cached before it, plus an RPC timeout', () => {
    expect(INTROSPECTION_TOMBSTONE_TTL_SECONDS).toBeGreaterThanOrEqual(
      INTROSPECTION_CACHE_MAX_TTL_SECONDS + 10,
    );
  });

  it('writes a suspension’s thousands of tombstones in bounded batches, every one of them', async () => {
    let inFlight = 0;
    let most = 0;
    const { cache, written } = fakeRedis({
      set: async () => {
        most = Math.max(most, ++inFlight);
        await new Promise((r) => setImmediate(r));
        inFlight -= 1;
        return 'OK';
      },
    });
    const digests = Array.from({ length: 1234 }, (_, i) => i.toString(16).padStart(64, '0'));
    await cache.tombstone('partner-a', digests);
    expect(new Set(written.map((w) => w[0])).size).toBe(1234);
    expect(most).toBe(500);
  });

  it('does nothing for an empty list', async () => {
    const { cache, written } = fakeRedis({ set: () => Promise.reject(new Error('must not be called')) });
    await cache.tombstone('partner-a', []);
    expect(written).toEqual([]);
  });

  it.each([
    ['Redis is unreachable', () => Promise.reject(new Error('Connection is closed.'))],
    [
      'one write failed',
      (key: string) =>
        key.endsWith('b'.repeat(64)) ? Promise.reject(new Error('OOM')) : Promise.resolve('OK'),
    ],
    ['a reply is not OK', () => Promise.resolve(null)],
  ])('throws when Redis does not confirm every tombstone: %s', async (_case, set) => {
    const { cache } = fakeRedis({ set });
    await expect(cache.tombstone('partner-a', ['a'.repeat(64), 'b'.repeat(64)])).rejects.toBeInstanceOf(
      IntrospectionCacheUnavailableError,
    );
  });

  describe('behind Sentinel', () => {
    /** A Sentinel-configured ioredis client, with SET and WAIT answered by the test. */
    function sentinelRedis(wait: () => Promise<number>, replicas: unknown[] = [['10.0.0.2', '6379', '42']]) {
      const calls: string[] = [];
      const redis = Object.create(Redis.prototype) as Redis;
      Object.assign(redis, {
        options: { sentinels: [{ host: 's1', port: 26379 }] },
        set: () => {
          calls.push('set');
          return Promise.resolve('OK');
        },
        wait: (count: number, timeoutMs: number) => {
          calls.push(`wait ${count} ${timeoutMs}`);
          return wait();
        },
        role: () => {
          calls.push('role');
          return Promise.resolve(['master', 42, replicas]);
        },
      });
      return { cache: new IntrospectionCache(redis, redis), calls };
    }

    it('resolves only once a replica has the tombstones (WAIT 1 after the writes)', async () => {
      const { cache, calls } = sentinelRedis(async () => 1);
      await cache.tombstone('partner-a', ['a'.repeat(64), 'b'.repeat(64)]);
      expect(calls).toEqual(['set', 'set', 'wait 1 500']);
    });

    it.each([
      ['an attached replica does not confirm in time', () => Promise.resolve(0)],
      ['WAIT fails', () => Promise.reject(new Error('Command timed out'))],
    ])(
      'refuses the revocation (503, retry) when %s: a failover could lose the tombstones',
      async (_c, wait) => {
        const { cache } = sentinelRedis(wait);
        await expect(cache.tombstone('partner-a', ['a'.repeat(64)])).rejects.toBeInstanceOf(
          IntrospectionCacheUnavailableError,
        );
      },
    );

    it('accepts the tombstones of a primary with no replica attached: no replica could be promoted without them', async () => {
      const { cache, calls } = sentinelRedis(async () => 0, []);
      await cache.tombstone('partner-a', ['a'.repeat(64)]);
      expect(calls).toEqual(['set', 'wait 1 500', 'role']);
    });
  });
});

import { INTROSPECTION_TOMBSTONE_TTL_SECONDS, type CachedIntrospection } from '@svc/contracts';
import type Redis from 'ioredis';
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

/** Just enough of ioredis for the failure paths real Redis cannot be made to produce on demand. */
function fakeRedis(behaviour: {
  get?: () => Promise<string | null>;
  exec?: () => Promise<[Error | null, unknown][] | null>;
}) {
  const queued: unknown[][] = [];
  const redis = {
    get: behaviour.get ?? (async () => null),
    multi: () => {
      const multi = {
        set: (...args: unknown[]) => {
          queued.push(args);
          return multi;
        },
        exec: behaviour.exec ?? (async () => queued.map(() => [null, 'OK'] as [null, string])),
      };
      return multi;
    },
  };
  return { cache: new IntrospectionCache(redis as unknown as Redis), queued };
}

describe('IntrospectionCache', () => {
  it('reports an unreachable Redis on get as IntrospectionCacheUnavailableError', async () => {
    const { cache } = fakeRedis({
      get: () => Promise.reject(new Error("Stream isn't writeable and enableOfflineQueue options is false")),
    });
    await expect(cache.get('a'.repeat(64))).rejects.toBeInstanceOf(IntrospectionCacheUnavailableError);
  });

  it('counts an entry that does not parse as a miss (auth-server is then asked)', async () => {
    for (const raw of ['not json', '{"active":true}', '[]']) {
      const { cache } = fakeRedis({ get: async () => raw });
      await expect(cache.get('a'.repeat(64))).resolves.toBeUndefined();
    }
  });

  it('writes every tombstone in one MULTI with a plain SET (no NX) and the tombstone TTL', async () => {
    const { cache, queued } = fakeRedis({});
    await cache.tombstone(['a'.repeat(64), 'b'.repeat(64)]);
    expect(queued).toEqual([
      [`introspect:${'a'.repeat(64)}`, '{"active":false}', 'EX', INTROSPECTION_TOMBSTONE_TTL_SECONDS],
      [`introspect:${'b'.repeat(64)}`, '{"active":false}', 'EX', INTROSPECTION_TOMBSTONE_TTL_SECONDS],
    ]);
  });

  it('does nothing for an empty list', async () => {
    const { cache, queued } = fakeRedis({ exec: () => Promise.reject(new Error('must not be called')) });
    await cache.tombstone([]);
    expect(queued).toEqual([]);
  });

  it.each([
    ['Redis is unreachable', () => Promise.reject(new Error('Connection is closed.'))],
    ['the transaction was discarded', () => Promise.resolve(null)],
    [
      'one write failed',
      () =>
        Promise.resolve([
          [null, 'OK'],
          [new Error('OOM'), null],
        ] as [Error | null, unknown][]),
    ],
    ['a reply is missing', () => Promise.resolve([[null, 'OK']] as [Error | null, unknown][])],
  ])('throws when Redis does not confirm every tombstone: %s', async (_case, exec) => {
    const { cache } = fakeRedis({ exec });
    await expect(cache.tombstone(['a'.repeat(64), 'b'.repeat(64)])).rejects.toBeInstanceOf(
      IntrospectionCacheUnavailableError,
    );
  });
});

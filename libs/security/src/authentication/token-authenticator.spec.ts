import { createHash } from 'node:crypto';
import {
  INTROSPECTION_CACHE_MAX_TTL_SECONDS,
  type CachedIntrospection,
  type IntrospectResponse,
} from '@svc/contracts';
import { AppMetrics, DependencyUnavailableError } from '@svc/platform';
import {
  IntrospectionCacheUnavailableError,
  type IntrospectionCache,
  type StampedIntrospection,
} from './introspection-cache';
import type { Introspector } from './introspector';
import { RateLimiter, type RateLimitDecision, type TokenKeys } from '../limits/rate-limit';
import { TokenAuthenticator } from './token-authenticator';

/** Only the lower-case hex SHA-256 of the token's UTF-8 bytes ever reaches the cache or auth-server. */
const tokenDigest = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');
const TOKEN = `at_${'c2VjcmV0LXRva2VuLXZhbHVl'.padEnd(43, 'A')}`;
const DIGEST = tokenDigest(TOKEN);
const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();
const active = (
  overrides: Partial<Extract<CachedIntrospection, { active: true }>> = {},
): CachedIntrospection => ({
  active: true,
  user_id: 'usr_1',
  client_id: 'sandbox-partner',
  scopes: ['profile:read'],
  expires_at: inAnHour(),
  ...overrides,
});

/** A cache with Redis behind it, or without (`down`); records what it was asked. */
class FakeCache {
  readonly entries = new Map<string, StampedIntrospection>();
  readonly gets: string[] = [];
  readonly puts: [string, StampedIntrospection][] = [];
  /** Tombstone keys as the state Redis holds them. */
  readonly tombstones = new Set<string>();
  /** The digests `liveGeneration` checked (a metered request's check is the limiter's call). */
  readonly revocationChecks: string[] = [];
  down = false;
  putFails = false;
  /** What the state Redis holds under each generation key; a missing one is set, as the scripts do. */
  readonly generations = new Map<string, string>();
  /** The state Redis server answering now (its run_id); undefined while reconnecting. */
  server: string | undefined = 's1';
  private setCount = 0;
  private readonly serverListeners: (() => void)[] = [];

  stamp(generation: string) {
    return this.server === undefined ? undefined : `${generation}@${this.server}`;
  }

  onStateServerChange(listener: () => void) {
    this.serverListeners.push(listener);
  }

  /** A failover or a restart: another server, which kept the generation keys (they replicate). */
  switchServer(server: string) {
    this.server = server;
    for (const listener of this.serverListeners) listener();
  }

  generationOf(generationKey: string) {
    // Set anew when missing, as the scripts do (from the Redis clock): never a value seen before.
    if (!this.generations.has(generationKey)) this.generations.set(generationKey, `g${++this.setCount}`);
    return this.generations.get(generationKey)!;
  }

  async liveGeneration(clientId: string, digest: string) {
    this.revocationChecks.push(digest);
    if (this.down) throw new IntrospectionCacheUnavailableError(new Error('connection refused'));
    if (this.tombstones.has(`revoked:{${clientId}}:${digest}`)) return null;
    return this.stamp(this.generationOf(`generation:{${clientId}}`));
  }

  async get(digest: string) {
    this.gets.push(digest);
    if (this.down) throw new IntrospectionCacheUnavailableError(new Error('connection refused'));
    return this.entries.get(digest);
  }

  async putIfAbsent(digest: string, answer: StampedIntrospection) {
    this.puts.push([digest, answer]);
    if (this.down || this.putFails) throw new IntrospectionCacheUnavailableError(new Error('timeout'));
    if (this.entries.has(digest)) return false;
    this.entries.set(digest, answer);
    return true;
  }
}

class FakeIntrospector implements Introspector {
  readonly asked: string[] = [];
  answers = new Map<string, IntrospectResponse>();
  down = false;

  async introspect(digest: string): Promise<IntrospectResponse> {
    this.asked.push(digest);
    if (this.down) throw new DependencyUnavailableError('auth-server');
    return this.answers.get(digest) ?? { active: false };
  }
}

const ADMITTED: RateLimitDecision = {
  admitted: true,
  window: 'minute',
  limit: 600,
  remaining: 599,
  resetAt: 1_763_000_042,
};

/** The script's part: refuses uncounted when the tombstone key is among the cache's, else counts. */
class FakeLimiter extends RateLimiter {
  readonly calls: [string, TokenKeys][] = [];
  constructor(private readonly cache: FakeCache) {
    super();
  }
  consume(): Promise<RateLimitDecision> {
    throw new Error('a bearer request is counted with its tombstone check');
  }
  async consumeForToken(clientId: string, keys: TokenKeys) {
    this.calls.push([clientId, keys]);
    if (this.cache.tombstones.has(keys.tombstone)) return undefined;
    return { decision: ADMITTED, generation: this.cache.generationOf(keys.generation) };
  }
}

function setup() {
  const cache = new FakeCache();
  const introspector = new FakeIntrospector();
  const limiter = new FakeLimiter(cache);
  const authenticator = new TokenAuthenticator(cache as unknown as IntrospectionCache, introspector);
  /** A metered request's metering, whose decisions land in `decisions`. */
  const metered = (decisions: RateLimitDecision[] = []) => ({
    limiter,
    onDecision: (d: RateLimitDecision) => decisions.push(d),
  });
  return { cache, introspector, limiter, authenticator, metered };
}

describe('TokenAuthenticator', () => {
  it('counts each lookup as a cache hit or a miss (auth-server asked), from zero', async () => {
    const metrics = new AppMetrics('crew-api');
    const cache = new FakeCache();
    const introspector = new FakeIntrospector();
    const authenticator = new TokenAuthenticator(
      cache as unknown as IntrospectionCache,
      introspector,
      metrics,
    );
    const count = async (result: string) => {
      const line = (await metrics.render())
        .split('\n')
        .find((l) => l.startsWith('token_cache_lookups_total{') && l.includes(`result="${result}"`));
      return line === undefined ? undefined : Number(line.split(' ').at(-1));
    };
    expect([await count('hit'), await count('miss')]).toEqual([0, 0]);

    introspector.answers.set(DIGEST, active());
    await authenticator.authenticate(TOKEN); // miss, then cached
    await authenticator.authenticate(TOKEN); // hit
    cache.down = true;
    await authenticator.authenticate(TOKEN); // the cache away: auth-server asked
    await authenticator.authenticate('not-a-token'); // refused before any lookup
    expect([await count('hit'), await count('miss')]).toEqual([1, 2]);
  });

  it('answers a cache hit from the cache and one state check: no introspection, no write', async () => {
    const { cache, introspector, authenticator } = setup();
    const answer = active({ scopes: ['profile:read', 'vessels:read'] });
    cache.entries.set(DIGEST, { ...answer, generation: 'g1@s1' });

    await expect(authenticator.authenticate(TOKEN)).resolves.toEqual({
      user_id: 'usr_1',
      client_id: 'sandbox-partner',
      scopes: ['profile:read', 'vessels:read'],
      expires_at: answer.active ? answer.expires_at : '',
    });
    expect(cache.gets).toEqual([DIGEST]);
    expect(cache.revocationChecks).toEqual([DIGEST]);
    expect(introspector.asked).toEqual([]);
    expect(cache.puts).toEqual([]);
  });

  it('rejects a cached inactive answer without asking auth-server', async () => {
    const { cache, introspector, authenticator } = setup();
    cache.entries.set(DIGEST, { active: false });
    introspector.answers.set(DIGEST, active());

    await expect(authenticator.authenticate(TOKEN)).resolves.toBeUndefined();
    expect(introspector.asked).toEqual([]);
  });

  it('on a miss asks the introspector with the digest, then caches its answer', async () => {
    const { cache, introspector, authenticator } = setup();
    const answer = active();
    introspector.answers.set(DIGEST, answer);

    await expect(authenticator.authenticate(TOKEN)).resolves.toMatchObject({ user_id: 'usr_1' });
    expect(introspector.asked).toEqual([DIGEST]);
    expect(cache.puts).toEqual([[DIGEST, { ...answer, generation: 'g1@s1' }]]);
  });

  it('caches inactive answers too, and rejects the token', async () => {
    const { cache, introspector, authenticator } = setup();

    await expect(authenticator.authenticate(TOKEN)).resolves.toBeUndefined();
    expect(introspector.asked).toEqual([DIGEST]);
    expect(cache.puts).toEqual([[DIGEST, { active: false }]]);
  });

  it('still answers when storing the answer fails', async () => {
    const { cache, introspector, authenticator } = setup();
    cache.putFails = true;
    introspector.answers.set(DIGEST, active());

    await expect(authenticator.authenticate(TOKEN)).resolves.toMatchObject({ user_id: 'usr_1' });
    expect(cache.puts).toHaveLength(1);
  });

  describe('with the cache unavailable (either Redis)', () => {
    it('asks the introspector and writes nothing', async () => {
      const { cache, introspector, authenticator } = setup();
      cache.down = true;
      introspector.answers.set(DIGEST, active());

      await expect(authenticator.authenticate(TOKEN)).resolves.toMatchObject({ user_id: 'usr_1' });
      expect(introspector.asked).toEqual([DIGEST]);
      expect(cache.puts).toEqual([]);
    });

    it('rejects a token auth-server calls inactive (a revoked token never passes)', async () => {
      const { cache, authenticator } = setup();
      cache.down = true;

      await expect(authenticator.authenticate(TOKEN)).resolves.toBeUndefined();
    });
  });

  it('fails closed with DependencyUnavailableError when the introspector cannot answer', async () => {
    const { introspector, authenticator } = setup();
    introspector.down = true;

    await expect(authenticator.authenticate(TOKEN)).rejects.toBeInstanceOf(DependencyUnavailableError);
  });

  it('fails closed when neither Redis nor the introspector answers', async () => {
    const { cache, introspector, authenticator } = setup();
    cache.down = true;
    introspector.down = true;

    await expect(authenticator.authenticate(TOKEN)).rejects.toBeInstanceOf(DependencyUnavailableError);
  });

  it('treats a cached active answer whose expires_at has passed as inactive', async () => {
    const { cache, introspector, authenticator } = setup();
    cache.entries.set(DIGEST, active({ expires_at: new Date(Date.now() - 1000).toISOString() }));

    await expect(authenticator.authenticate(TOKEN)).resolves.toBeUndefined();
    expect(introspector.asked).toEqual([]);
  });

  it('treats an introspected active answer that has already expired, or has no valid date, as inactive', async () => {
    const { introspector, authenticator } = setup();
    introspector.answers.set(DIGEST, active({ expires_at: '2020-01-01T00:00:00Z' }));
    await expect(authenticator.authenticate(TOKEN)).resolves.toBeUndefined();

    const other = `at_${'b'.repeat(43)}`;
    introspector.answers.set(tokenDigest(other), active({ expires_at: 'not a date' }));
    await expect(authenticator.authenticate(other)).resolves.toBeUndefined();
  });

  describe('on a metered route', () => {
    const KEYS = {
      tombstone: `revoked:{sandbox-partner}:${DIGEST}`,
      generation: 'generation:{sandbox-partner}',
    };

    it('remembers a live answer: the next request is one limiter call (tombstone, generation, count) and nothing else', async () => {
      const { cache, introspector, limiter, authenticator, metered } = setup();
      introspector.answers.set(DIGEST, active());
      const decisions: RateLimitDecision[] = [];

      for (let i = 0; i < 3; i += 1) {
        await expect(authenticator.authenticate(TOKEN, metered(decisions))).resolves.toMatchObject({
          client_id: 'sandbox-partner',
        });
      }
      expect(decisions).toEqual([ADMITTED, ADMITTED, ADMITTED]);
      expect(limiter.calls).toEqual([
        ['sandbox-partner', KEYS],
        ['sandbox-partner', KEYS],
        ['sandbox-partner', KEYS],
      ]);
      expect(cache.gets).toEqual([DIGEST]);
      expect(introspector.asked).toEqual([DIGEST]);
      expect(cache.revocationChecks).toEqual([]);
    });

    it('refuses a cached live answer of a tombstoned token, uncounted, without asking auth-server', async () => {
      const { cache, introspector, limiter, authenticator, metered } = setup();
      cache.entries.set(DIGEST, { ...active(), generation: 'g1@s1' });
      cache.tombstones.add(KEYS.tombstone);
      const decisions: RateLimitDecision[] = [];

      await expect(authenticator.authenticate(TOKEN, metered(decisions))).resolves.toBeUndefined();
      expect(limiter.calls).toEqual([['sandbox-partner', KEYS]]);
      expect(decisions).toEqual([]);
      expect(introspector.asked).toEqual([]);
    });

    it('refuses a remembered token on the very next request once tombstoned, uncounted', async () => {
      const { cache, introspector, authenticator, metered } = setup();
      introspector.answers.set(DIGEST, active());
      await authenticator.authenticate(TOKEN, metered());
      cache.tombstones.add(KEYS.tombstone);
      const decisions: RateLimitDecision[] = [];

      await expect(authenticator.authenticate(TOKEN, metered(decisions))).resolves.toBeUndefined();
      expect(decisions).toEqual([]);
    });

    it('asks auth-server again, past the cache, when the partner’s state generation changed (Redis lost its tombstones)', async () => {
      const { cache, introspector, authenticator, metered } = setup();
      introspector.answers.set(DIGEST, active());
      await authenticator.authenticate(TOKEN, metered());
      // The state Redis restarted empty: the revocation's tombstones are gone, the cache still says active.
      cache.generations.set(KEYS.generation, 'g2');
      introspector.answers.set(DIGEST, { active: false });

      await expect(authenticator.authenticate(TOKEN, metered())).resolves.toBeUndefined();
      expect(introspector.asked).toEqual([DIGEST, DIGEST]);
      expect(cache.gets).toEqual([DIGEST]);
    });

    it('remembers the token again under the new generation when auth-server still calls it live', async () => {
      const { cache, introspector, authenticator, metered } = setup();
      introspector.answers.set(DIGEST, active());
      await authenticator.authenticate(TOKEN, metered());
      cache.generations.set(KEYS.generation, 'g2');
      await authenticator.authenticate(TOKEN, metered());
      await authenticator.authenticate(TOKEN, metered());
      expect(introspector.asked).toEqual([DIGEST, DIGEST]);
    });

    it('looks the token up again once INTROSPECTION_CACHE_MAX_TTL_SECONDS have passed, so every tombstone outlives what it remembers', async () => {
      const { cache, introspector, authenticator, metered } = setup();
      introspector.answers.set(DIGEST, active());
      const now = jest.spyOn(Date, 'now');
      try {
        now.mockReturnValue(1_000_000);
        await authenticator.authenticate(TOKEN, metered());
        now.mockReturnValue(1_000_000 + INTROSPECTION_CACHE_MAX_TTL_SECONDS * 1000 - 1);
        await authenticator.authenticate(TOKEN, metered());
        expect(cache.gets).toHaveLength(1);
        now.mockReturnValue(1_000_000 + INTROSPECTION_CACHE_MAX_TTL_SECONDS * 1000);
        await authenticator.authenticate(TOKEN, metered());
        expect(cache.gets).toHaveLength(2);
      } finally {
        now.mockRestore();
      }
    });

    it('stores what auth-server answered with the generation the count read', async () => {
      const { cache, introspector, authenticator, metered } = setup();
      const answer = active();
      introspector.answers.set(DIGEST, answer);
      await authenticator.authenticate(TOKEN, metered());
      expect(cache.puts).toEqual([[DIGEST, { ...answer, generation: 'g1@s1' }]]);
    });

    it.each([
      ['under another generation (the state Redis lost data since)', 'g0'],
      ['by an earlier release, without one', undefined],
    ])(
      'asks auth-server about a cached answer stored %s, and keeps the cache’s word out',
      async (_how, stamp) => {
        const { cache, introspector, limiter, authenticator, metered } = setup();
        cache.entries.set(DIGEST, stamp === undefined ? active() : { ...active(), generation: stamp });
        introspector.answers.set(DIGEST, { active: false });
        const decisions: RateLimitDecision[] = [];

        await expect(authenticator.authenticate(TOKEN, metered(decisions))).resolves.toBeUndefined();
        expect(introspector.asked).toEqual([DIGEST]);
        expect(limiter.calls).toHaveLength(1);
        expect(decisions).toEqual([]);
      },
    );

    it('takes a cached answer stored under the current generation without asking auth-server', async () => {
      const { cache, introspector, authenticator, metered } = setup();
      cache.entries.set(DIGEST, { ...active(), generation: 'g1@s1' });
      const principal = await authenticator.authenticate(TOKEN, metered());
      expect(principal).toEqual({
        user_id: 'usr_1',
        client_id: 'sandbox-partner',
        scopes: ['profile:read'],
        expires_at: expect.any(String),
      });
      expect(introspector.asked).toEqual([]);
      expect(cache.puts).toEqual([]);
    });

    it('never counts a token that is not live', async () => {
      const { limiter, authenticator, metered } = setup();
      await expect(authenticator.authenticate(TOKEN, metered())).resolves.toBeUndefined();
      await expect(authenticator.authenticate('not-a-token', metered())).resolves.toBeUndefined();
      expect(limiter.calls).toEqual([]);
    });
  });

  describe('on a route that is not metered (/oauth/userinfo), after the state Redis lost data', () => {
    it.each([
      ['emptied (FLUSHALL, a restart): the partner’s generation is set anew', 'flush'],
      ['failed over to another server, which kept the generation', 'failover'],
    ])('asks auth-server about a cached answer once the state Redis was %s', async (_how, kind) => {
      const { cache, introspector, authenticator } = setup();
      introspector.answers.set(DIGEST, active());
      await expect(authenticator.authenticate(TOKEN)).resolves.toBeDefined();
      expect(cache.entries.get(DIGEST)).toMatchObject({ generation: 'g1@s1' });
      // Revoked; then the tombstone is lost with the state Redis's data, the cache still says active.
      introspector.answers.set(DIGEST, { active: false });
      if (kind === 'flush') cache.generations.clear();
      else cache.switchServer('s2');

      await expect(authenticator.authenticate(TOKEN)).resolves.toBeUndefined();
      expect(introspector.asked).toEqual([DIGEST, DIGEST]);
    });

    it('refuses a token tombstoned under its partner’s hash tag, whatever the cache says', async () => {
      const { cache, introspector, authenticator } = setup();
      cache.entries.set(DIGEST, { ...active(), generation: 'g1@s1' });
      cache.tombstones.add(`revoked:{sandbox-partner}:${DIGEST}`);
      await expect(authenticator.authenticate(TOKEN)).resolves.toBeUndefined();
      expect(introspector.asked).toEqual([]);
    });

    it('trusts no cached answer while the state Redis server is not known (reconnecting), and stores none', async () => {
      const { cache, introspector, authenticator } = setup();
      cache.entries.set(DIGEST, { ...active(), generation: 'g1@s1' });
      cache.server = undefined;
      introspector.answers.set(DIGEST, active());
      await expect(authenticator.authenticate(TOKEN)).resolves.toBeDefined();
      expect(introspector.asked).toEqual([DIGEST]);
      expect(cache.puts).toEqual([]);
    });
  });

  describe('on a metered route, after a failover of the state Redis', () => {
    it('forgets what it remembered and asks auth-server, although the generation key survived', async () => {
      const { cache, introspector, authenticator, metered } = setup();
      introspector.answers.set(DIGEST, active());
      await authenticator.authenticate(TOKEN, metered());
      await authenticator.authenticate(TOKEN, metered());
      expect(introspector.asked).toEqual([DIGEST]);
      // The promoted replica never got the revocation's tombstone.
      introspector.answers.set(DIGEST, { active: false });
      cache.switchServer('s2');

      await expect(authenticator.authenticate(TOKEN, metered())).resolves.toBeUndefined();
      expect(introspector.asked).toEqual([DIGEST, DIGEST]);
    });

    it('remembers nothing while the server is not known, and asks auth-server each time', async () => {
      const { cache, introspector, authenticator, metered } = setup();
      introspector.answers.set(DIGEST, active());
      cache.server = undefined;
      await authenticator.authenticate(TOKEN, metered());
      await authenticator.authenticate(TOKEN, metered());
      expect(introspector.asked).toEqual([DIGEST, DIGEST]);
      expect(cache.puts).toEqual([]);
    });
  });

  it('remembers nothing on a route that is not metered: each request asks the cache', async () => {
    const { cache, introspector, authenticator } = setup();
    introspector.answers.set(DIGEST, active());
    await authenticator.authenticate(TOKEN);
    await authenticator.authenticate(TOKEN);
    expect(cache.gets).toEqual([DIGEST, DIGEST]);
  });

  it.each([
    ['has space'],
    ['quote"d'],
    ['é'],
    ['x'.repeat(1025)],
    [`rt_${'a'.repeat(43)}`],
    [`at_${'a'.repeat(42)}`],
    [`at_${'a'.repeat(44)}`],
    [`at_${'a'.repeat(42)}=`],
    [`at_${'a'.repeat(42)}+`],
  ])(
    'refuses a token auth-server cannot have minted without a lookup, a cache entry or a question (%#)',
    async (token) => {
      const { cache, introspector, authenticator } = setup();

      await expect(authenticator.authenticate(token)).resolves.toBeUndefined();
      expect(cache.gets).toEqual([]);
      expect(cache.puts).toEqual([]);
      expect(introspector.asked).toEqual([]);
    },
  );
});

import { Controller, Get, Module } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { introspectionCacheKey, partnerTombstoneKey } from '@svc/contracts';
import { loadConfig, REDIS, REDIS_CACHE, sha256Hex, type RedisClient } from '@svc/platform';
import {
  BearerAuth,
  IntrospectionCache,
  IntrospectionCacheUnavailableError,
  Principal,
  RATE_LIMIT_CONFIG,
} from '@svc/security';
import Redis from 'ioredis';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { redisReady, StandInIntrospector, startBearerProbe } from '../support/http-app';
import { eventually, testServices } from '../support/services';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-topologies';

/**
 * The two Redis roles against real servers of their own: the state Redis (`noeviction`: rate-limit
 * windows, revocation tombstones) and the cache Redis (`allkeys-lru`: introspection answers),
 * each with a small maxmemory so that the tests can fill them. A probe app is wired the way
 * crew-api is (PlatformModule, RedisModule, SecurityModule, `@BearerAuth()` on `/v1/*`), with a
 * stand-in introspector whose table this test controls.
 */
const services = testServices();
const MAXMEMORY = '4mb';

jest.setTimeout(60_000);

const introspector = new StandInIntrospector();
const timesAsked = (digest: string) => introspector.timesAsked(digest);
const issueToken = () => introspector.issue();
const wellFormed = () => `at_${randomBytes(32).toString('base64url')}`;

@Controller('v1/probe')
class ProbeController {
  @Get()
  @BearerAuth()
  any(@Principal() principal: Principal) {
    return { client_id: principal.client_id };
  }
}

@Module({ controllers: [ProbeController] })
class ProbeModule {}

interface Probe {
  readonly app: NestFastifyApplication;
  readonly url: string;
  readonly cache: IntrospectionCache;
  readonly stateClient: RedisClient;
  readonly cacheClient: RedisClient;
}

async function startProbe(
  state: PrivateRedis,
  cache: PrivateRedis,
  limits: Record<string, string> = {},
): Promise<Probe> {
  const { app, url } = await startBearerProbe(introspector, [ProbeModule], {
    REDIS_URL: state.url,
    REDIS_CACHE_URL: cache.url,
    REDIS_KEY_PREFIX: services.redisKeyPrefix,
    ...loadConfig(RATE_LIMIT_CONFIG, limits),
  });
  return {
    app,
    url,
    cache: app.get(IntrospectionCache),
    stateClient: await redisReady(app.get<RedisClient>(REDIS)),
    cacheClient: await redisReady(app.get<RedisClient>(REDIS_CACHE)),
  };
}

const get = (probe: Probe, token: string) =>
  fetch(`${probe.url}/v1/probe`, { headers: { authorization: `Bearer ${token}` } });

/** A client of one private server, without the app's key prefix, to look at and fill it. */
function inspect(server: PrivateRedis): Redis {
  const client = new Redis(server.url, { maxRetriesPerRequest: 0, retryStrategy: () => 200 });
  client.on('error', () => undefined);
  return client;
}

const keyOf = (key: string) => `${services.redisKeyPrefix}${key}`;

/**
 * Writes 1 KiB values until the server refuses one (noeviction) or until well past its maxmemory
 * (an evicting policy). A noeviction server hovers at the limit (connection buffers come and go),
 * so it is then held over it for good: maxmemory is lowered below what the data uses, which is
 * what a full server looks like, and a lone small write must be refused.
 */
async function fill(client: Redis, prefix: string): Promise<{ oom?: Error }> {
  const value = 'x'.repeat(1024);
  let refused = false;
  for (let batch = 0; batch < 400 && !refused; batch++) {
    const pipeline = client.pipeline();
    for (let i = 0; i < 50; i++) pipeline.set(`${prefix}:${batch}:${i}`, value);
    refused = ((await pipeline.exec()) ?? []).some(([err]) => err !== null);
  }
  if (!refused) return {};
  const used = Number(/used_memory:(\d+)/.exec(await client.info('memory'))?.[1]);
  await client.config('SET', 'maxmemory', String(used - 512 * 1024));
  const oom = await client.set(`${prefix}:probe`, 'x').then(
    () => undefined,
    (err: Error) => err,
  );
  return { oom };
}

async function evictedKeys(client: Redis): Promise<number> {
  const stats = await client.info('stats');
  return Number(/evicted_keys:(\d+)/.exec(stats)?.[1] ?? NaN);
}

describe('two Redis roles: state (noeviction) and cache (allkeys-lru)', () => {
  let state: PrivateRedis;
  let cache: PrivateRedis;
  let probe: Probe;
  let stateInspector: Redis;
  let cacheInspector: Redis;

  beforeAll(async () => {
    [state, cache] = await Promise.all([
      startPrivateRedis({ maxmemory: MAXMEMORY, policy: 'noeviction' }),
      startPrivateRedis({ maxmemory: MAXMEMORY, policy: 'allkeys-lru' }),
    ]);
    probe = await startProbe(state, cache);
    stateInspector = inspect(state);
    cacheInspector = inspect(cache);
  });

  afterAll(async () => {
    await probe?.app.close();
    stateInspector?.disconnect();
    cacheInspector?.disconnect();
    await Promise.all([state?.stop(), cache?.stop()]);
  });

  /**
   * Keys of the state Redis besides the failed-authentication counters: a 401 counts once against
   * the caller's address (one key per address, whatever the token), which is the limiter working.
   */
  async function stateKeysBesidesFailureCounters(): Promise<number> {
    const keys = await stateInspector.keys('*');
    return keys.filter((key) => !key.includes('authfail:{')).length;
  }

  describe('the negative cache takes only well-formed tokens', () => {
    it.each([
      ['random garbage', () => randomBytes(24).toString('hex')],
      ['the prefix, one character short', () => wellFormed().slice(0, -1)],
      ['the prefix, one character long', () => `${wellFormed()}A`],
      ['a refresh token’s prefix', () => `rt_${randomBytes(32).toString('base64url')}`],
      ['a long b64token', () => `at_${'A'.repeat(900)}`],
    ])('answers %s with 401 without a key in either Redis or a question to auth-server', async (_c, make) => {
      const [stateBefore, cacheBefore, askedBefore] = [
        await stateKeysBesidesFailureCounters(),
        await cacheInspector.dbsize(),
        introspector.asked.length,
      ];
      for (let i = 0; i < 20; i++) {
        const response = await get(probe, make());
        expect(response.status).toBe(401);
        expect(response.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
      }
      expect(await stateKeysBesidesFailureCounters()).toBe(stateBefore);
      expect(await cacheInspector.dbsize()).toBe(cacheBefore);
      expect(introspector.asked.length).toBe(askedBefore);
    });

    it('caches a well-formed unknown token as inactive in the cache Redis, and nothing in the state Redis', async () => {
      const stateBefore = await stateKeysBesidesFailureCounters();
      const token = wellFormed();
      const digest = sha256Hex(token);
      expect((await get(probe, token)).status).toBe(401);
      expect((await get(probe, token)).status).toBe(401);
      expect(timesAsked(digest)).toBe(1);
      expect(await cacheInspector.get(keyOf(introspectionCacheKey(digest)))).toBe('{"active":false}');
      expect(await stateKeysBesidesFailureCounters()).toBe(stateBefore);
    });
  });

  describe('revocation tombstones live in the state Redis', () => {
    it('keeps a revoked token refused when the cache Redis is flushed', async () => {
      const { token, digest, clientId } = issueToken();
      expect((await get(probe, token)).status).toBe(200);
      expect(await cacheInspector.exists(keyOf(introspectionCacheKey(digest)))).toBe(1);

      // The stand-in auth-server still calls the token active: only the tombstone can refuse it.
      await probe.cache.tombstone(clientId, [digest]);
      expect(await stateInspector.exists(keyOf(partnerTombstoneKey(clientId, digest)))).toBe(1);
      expect((await get(probe, token)).status).toBe(401);

      // The answer gone with the cache, auth-server is asked again (the real one would say revoked;
      // the stand-in still says active), and the tombstone refuses the token all the same.
      await cacheInspector.flushall();
      expect((await get(probe, token)).status).toBe(401);
      expect(timesAsked(digest)).toBe(2);
    });

    it('with the cache Redis down: live tokens pass (auth-server asked for those the process does not know), revocations still land', async () => {
      const { token, digest } = issueToken();
      const revoked = issueToken();
      expect((await get(probe, token)).status).toBe(200);
      expect((await get(probe, revoked.token)).status).toBe(200);
      await cache.kill();
      try {
        await eventually(async () => (probe.cacheClient.status !== 'ready' ? true : undefined));
        // Known to the process: the state Redis alone says it is not revoked.
        expect((await get(probe, token)).status).toBe(200);
        expect(timesAsked(digest)).toBe(1);
        // Not known: auth-server answers, and the process remembers it (the state Redis, which keeps
        // the tombstones and the generation, is up).
        const fresh = issueToken();
        expect((await get(probe, fresh.token)).status).toBe(200);
        expect((await get(probe, fresh.token)).status).toBe(200);
        expect(timesAsked(fresh.digest)).toBe(1);

        await expect(probe.cache.tombstone(revoked.clientId, [revoked.digest])).resolves.toBeUndefined();
        expect((await get(probe, revoked.token)).status).toBe(401);
      } finally {
        await cache.start();
        await eventually(async () => (probe.cacheClient.status === 'ready' ? true : undefined));
      }
      expect((await get(probe, revoked.token)).status).toBe(401);
    });
  });

  describe('a full cache Redis evicts, and the app keeps answering correctly', () => {
    it('serves live tokens, refuses revoked and unknown ones, and still meters', async () => {
      const live = issueToken();
      const revoked = issueToken();
      expect((await get(probe, live.token)).status).toBe(200);
      expect((await get(probe, revoked.token)).status).toBe(200);
      await probe.cache.tombstone(revoked.clientId, [revoked.digest]);

      const evictedBefore = await evictedKeys(cacheInspector);
      const { oom } = await fill(cacheInspector, 'filler');
      expect(oom).toBeUndefined();
      expect(await evictedKeys(cacheInspector)).toBeGreaterThan(evictedBefore);

      const response = await get(probe, live.token);
      expect(response.status).toBe(200);
      expect(response.headers.get('x-ratelimit-remaining')).not.toBeNull();
      expect((await get(probe, revoked.token)).status).toBe(401);
      expect((await get(probe, wellFormed())).status).toBe(401);
    });
  });
});

describe('a full state Redis refuses writes instead of evicting', () => {
  const PER_MINUTE = 4;
  let state: PrivateRedis;
  let cache: PrivateRedis;
  let probe: Probe;
  let stateInspector: Redis;

  beforeAll(async () => {
    [state, cache] = await Promise.all([
      startPrivateRedis({ maxmemory: MAXMEMORY, policy: 'noeviction' }),
      startPrivateRedis({ maxmemory: MAXMEMORY, policy: 'allkeys-lru' }),
    ]);
    probe = await startProbe(state, cache, { RATE_LIMIT_PER_MINUTE: String(PER_MINUTE) });
    stateInspector = inspect(state);
  });

  afterAll(async () => {
    await probe?.app.close();
    stateInspector?.disconnect();
    await Promise.all([state?.stop(), cache?.stop()]);
  });

  it('keeps every limiter window and the limit exact, and refuses revocations (OOM → 503, retry)', async () => {
    const { token, digest } = issueToken();
    const first = await get(probe, token);
    expect(first.status).toBe(200);
    const { client_id } = (await first.json()) as { client_id: string };
    const window = keyOf(`ratelimit:{${client_id}}:times`);

    const { oom } = await fill(stateInspector, 'filler');
    expect(oom?.message).toMatch(/^OOM /);

    // Redis lets a script that has already written (the limiter trims its window first) finish:
    // the limiter keeps counting, so a full state Redis admits nobody past the limit.
    const statuses: number[] = [];
    for (let i = 0; i < PER_MINUTE + 2; i++) statuses.push((await get(probe, token)).status);
    expect(statuses).toEqual([...Array<number>(PER_MINUTE - 1).fill(200), 429, 429, 429]);

    // A plain write fails loudly: auth-server would roll the revocation back and answer 503.
    await expect(probe.cache.tombstone('partner-x', [digest])).rejects.toBeInstanceOf(
      IntrospectionCacheUnavailableError,
    );

    // Its header, then one time per admission.
    expect(await stateInspector.llen(window)).toBe(1 + PER_MINUTE);
    expect(await evictedKeys(stateInspector)).toBe(0);
  });
});

describe('start-up check of the state Redis’s eviction policy', () => {
  const ROOT = path.resolve(__dirname, '../..');

  function startCrewApi(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [path.join(ROOT, 'dist/apps/crew-api/src/main.js')], {
        env: { PATH: process.env.PATH ?? '', ...env },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      child.on('exit', (code) => {
        clearTimeout(timer);
        resolve({ code, stderr });
      });
    });
  }

  let lru: PrivateRedis;
  beforeAll(async () => {
    lru = await startPrivateRedis({ maxmemory: MAXMEMORY, policy: 'allkeys-lru' });
  });
  afterAll(async () => {
    await lru?.stop();
  });

  it('refuses to start a production app whose state Redis may evict (exit 78, naming REDIS_URL)', async () => {
    const { code, stderr } = await startCrewApi({
      APP_ENV: 'production',
      PORT: String(40_000 + Math.floor(Math.random() * 9_000)),
      PUBLIC_BASE_URL: 'https://api.example.test',
      DATABASE_URL: services.databaseUrl,
      AMQP_URL: services.amqpUrl,
      REDIS_URL: lru.url,
      REDIS_KEY_PREFIX: services.redisKeyPrefix,
      INTERNAL_API_TOKEN: randomBytes(24).toString('hex'),
      CURSOR_SIGNING_KEY: randomBytes(24).toString('hex'),
    });
    expect(code).toBe(78);
    expect(stderr).toContain('REDIS_URL points at a Redis with maxmemory-policy allkeys-lru');
  });
});

import { Controller, Get, Module } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { partnerTombstoneKey } from '@svc/contracts';
import { loadConfig, REDIS, REDIS_CONFIG, type RedisClient } from '@svc/platform';
import { BearerAuth, IntrospectionCache, Principal, RATE_LIMIT_CONFIG } from '@svc/security';
import Redis from 'ioredis';
import { redisReady, StandInIntrospector, startBearerProbe } from '../support/http-app';
import { eventually, testServices } from '../support/services';
import {
  startPrivateRedis,
  startSentinel,
  type PrivateRedis,
  type SentinelTopology,
} from '../support/redis-topologies';

/**
 * Revocation holds after the state Redis loses data, on every route that accepts a token: a
 * metered one (`/v1/*`) and one that is not (as `/oauth/userinfo`), against real servers. The
 * probe is wired as an app is (PlatformModule, RedisModule, SecurityModule, `@BearerAuth()`), with
 * a stand-in introspector whose table plays auth-server's database: a revoked token is inactive
 * there, and the cache Redis still holds the active answer stored before the revocation.
 *   - the state Redis emptied (FLUSHALL): the tombstone is gone, the partner's generation is new;
 *   - a Sentinel failover to a replica that missed the tombstone: the generation key survived,
 *     but the server is another one, which the process detects as a reset.
 */
const services = testServices();
jest.setTimeout(90_000);

const introspector = new StandInIntrospector();
const timesAsked = (digest: string) => introspector.timesAsked(digest);
const issueToken = () => introspector.issue();

@Controller()
class ProbeController {
  /** Metered, as every authenticated /v1/* route. */
  @Get('v1/probe')
  @BearerAuth()
  metered(@Principal() principal: Principal) {
    return { client_id: principal.client_id };
  }

  /** Not metered, as /oauth/userinfo. */
  @Get('oauth/probe')
  @BearerAuth()
  unmetered(@Principal() principal: Principal) {
    return { client_id: principal.client_id };
  }
}

@Module({ controllers: [ProbeController] })
class ProbeModule {}

const ROUTES = ['/v1/probe', '/oauth/probe'] as const;

interface Probe {
  readonly app: NestFastifyApplication;
  readonly url: string;
  readonly cache: IntrospectionCache;
  readonly state: RedisClient;
  /** Each route's status for the token (503s, while Redis moves, are asked again). */
  statuses(token: string): Promise<number[]>;
}

async function startProbe(redisEnv: Record<string, string>): Promise<Probe> {
  const { app, url } = await startBearerProbe(introspector, [ProbeModule], {
    ...loadConfig(REDIS_CONFIG, { REDIS_KEY_PREFIX: services.redisKeyPrefix, ...redisEnv }),
    ...loadConfig(RATE_LIMIT_CONFIG, {}),
  });
  const state = await redisReady(app.get<RedisClient>(REDIS));
  const status = (path: string, token: string) =>
    eventually(async () => {
      const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } });
      return res.status === 503 ? undefined : res.status;
    }, 20_000);
  return {
    app,
    url,
    state,
    cache: app.get(IntrospectionCache),
    statuses: (token) => Promise.all(ROUTES.map((path) => status(path, token))),
  };
}

/** Revoked as auth-server revokes: tombstones first (in the state Redis), then its database. */
async function revoke(probe: Probe, issued: ReturnType<typeof issueToken>): Promise<void> {
  await probe.cache.tombstone(issued.clientId, [issued.digest]);
  introspector.answers.set(issued.digest, { active: false });
}

const keyOf = (key: string) => `${services.redisKeyPrefix}${key}`;

describe('revocation after the state Redis is emptied (FLUSHALL)', () => {
  let state: PrivateRedis;
  let cache: PrivateRedis;
  let probe: Probe;
  let inspector: Redis;

  beforeAll(async () => {
    [state, cache] = await Promise.all([
      startPrivateRedis({ maxmemory: '64mb', policy: 'noeviction' }),
      startPrivateRedis({ maxmemory: '64mb', policy: 'allkeys-lru' }),
    ]);
    probe = await startProbe({ REDIS_URL: state.url, REDIS_CACHE_URL: cache.url });
    inspector = new Redis(state.url, { maxRetriesPerRequest: 0 });
  });

  afterAll(async () => {
    await probe?.app.close();
    inspector?.disconnect();
    await Promise.all([state?.stop(), cache?.stop()]);
  });

  it('keeps a revoked token refused on a metered route and on one that is not (as /oauth/userinfo)', async () => {
    const revoked = issueToken();
    const live = issueToken();
    for (const { token } of [revoked, live]) {
      expect(await probe.statuses(token)).toEqual([200, 200]);
      expect(await probe.statuses(token)).toEqual([200, 200]);
    }
    await revoke(probe, revoked);
    expect(await probe.statuses(revoked.token)).toEqual([401, 401]);

    await inspector.flushall();
    expect(await inspector.exists(keyOf(partnerTombstoneKey(revoked.clientId, revoked.digest)))).toBe(0);
    // Only auth-server can say now, and it says revoked; the cache Redis's active answer is not taken.
    const askedBefore = timesAsked(revoked.digest);
    expect(await probe.statuses(revoked.token)).toEqual([401, 401]);
    expect(timesAsked(revoked.digest)).toBeGreaterThan(askedBefore);
    // A live token still passes on both, auth-server asked again rather than the old answer trusted.
    const liveAsked = timesAsked(live.digest);
    expect(await probe.statuses(live.token)).toEqual([200, 200]);
    expect(timesAsked(live.digest)).toBeGreaterThan(liveAsked);
  });
});

describe('revocation after a Sentinel failover to a replica that missed the tombstone', () => {
  let topology: SentinelTopology;
  let cache: PrivateRedis;
  let probe: Probe;

  beforeAll(async () => {
    [topology, cache] = await Promise.all([
      startSentinel(services.redisKeyPrefix),
      startPrivateRedis({ maxmemory: '64mb', policy: 'allkeys-lru' }),
    ]);
    probe = await startProbe({ ...topology.env, REDIS_CACHE_URL: cache.url });
  });

  afterAll(async () => {
    await probe?.app.close();
    await Promise.all([topology?.stop(), cache?.stop()]);
  });

  /** One command to the server on `port`, outside the app (its key prefix not applied). */
  async function on(port: number, ...args: string[]): Promise<unknown> {
    const client = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 0, lazyConnect: true });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return await client.call(args[0], ...args.slice(1));
    } finally {
      client.disconnect();
    }
  }

  it('detects the failover as a reset: the process forgets what it knew, and the revoked token stays refused', async () => {
    const revoked = issueToken();
    const live = issueToken();
    for (const { token } of [revoked, live]) {
      expect(await probe.statuses(token)).toEqual([200, 200]);
      expect(await probe.statuses(token)).toEqual([200, 200]);
    }
    await revoke(probe, revoked);
    expect(await probe.statuses(revoked.token)).toEqual([401, 401]);

    // The replica that will be promoted misses the tombstones (as one that lagged behind would).
    const primary = await topology.primaryPort();
    const replicas = (await on(
      Number(topology.env.REDIS_SENTINELS.split(',')[0].split(':')[1]),
      'SENTINEL',
      'REPLICAS',
      'mymaster',
    )) as string[][];
    const replica = Number(replicas[0][replicas[0].indexOf('port') + 1]);
    expect(replica).not.toBe(primary);
    await on(replica, 'CONFIG', 'SET', 'replica-read-only', 'no');
    await on(replica, 'DEL', keyOf(partnerTombstoneKey(revoked.clientId, revoked.digest)));
    await on(replica, 'CONFIG', 'SET', 'replica-read-only', 'yes');
    // The partner's generation did reach it: only the change of server can tell.
    expect(await on(replica, 'EXISTS', keyOf(`generation:{${revoked.clientId}}`))).toBe(1);

    const { to } = await topology.failover();
    expect(to).toBe(replica);
    // The app's client follows the sentinels to the new primary.
    await eventually(async () => {
      const info = probe.state.status === 'ready' ? await probe.state.info('server').catch(() => '') : '';
      return info.includes(`tcp_port:${to}`) ? true : undefined;
    }, 20_000);
    expect(await on(to, 'EXISTS', keyOf(partnerTombstoneKey(revoked.clientId, revoked.digest)))).toBe(0);

    expect(await probe.statuses(revoked.token)).toEqual([401, 401]);
    const liveAsked = timesAsked(live.digest);
    expect(await probe.statuses(live.token)).toEqual([200, 200]);
    expect(timesAsked(live.digest)).toBeGreaterThan(liveAsked);
  });
});

import { Controller, Get, Module } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { partnerTombstoneKey } from '@svc/contracts';
import {
  createLogger,
  createRedis,
  loadConfig,
  REDIS,
  REDIS_CONFIG,
  sha256Hex,
  type RedisClient,
} from '@svc/platform';
import {
  BearerAuth,
  IntrospectionCache,
  IntrospectionCacheUnavailableError,
  Principal,
  RATE_LIMIT_CONFIG,
} from '@svc/security';
import type Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { SIGN_IN_LIMITS, SignInThrottle } from '../../apps/auth-server/src/users/sign-in-throttle';
import { rateLimitKey } from '../../libs/security/src/limits/rate-limit';
import { redisReady, StandInIntrospector, startBearerProbe } from '../support/http-app';
import { eventually, testServices } from '../support/services';
import { startTopologies, TOPOLOGY_NAMES, type Topologies } from '../support/redis-topologies';

/**
 * Redis as deployed: the run's single server, a private three-primary Redis Cluster and a private
 * Sentinel set (primary, replica, three sentinels). The sign-in throttle's two-key script runs on
 * each (on a Cluster only because both keys share the account's hash tag), and a Sentinel failover
 * under traffic answers 503 Problems, never admits over the limit, never accepts a revoked token,
 * and resumes without restarting anything. The limiter's exactness across two processes and the
 * introspection cache's tombstones run on all three in libs/security's integration specs.
 */
const services = testServices();
jest.setTimeout(60_000);

let topologies: Topologies | undefined;

beforeAll(async () => {
  topologies = await startTopologies(services.redisUrl, services.redisKeyPrefix);
});

afterAll(async () => {
  await topologies?.stop();
});

// ---- sign-in throttle -------------------------------------------------------------------------

describe.each(TOPOLOGY_NAMES)('sign-in throttle on Redis %s', (topologyName) => {
  let redis: RedisClient;
  let throttle: SignInThrottle;

  beforeAll(async () => {
    redis = await redisReady(createRedis(topologies![topologyName].config));
    redis.on('error', () => undefined);
    throttle = new SignInThrottle(redis, createLogger('auth-server', 'silent'), {
      SIGN_IN_FAILURES_PER_ADDRESS: 30,
    });
  });

  afterAll(async () => {
    await redis?.quit();
  });

  const email = () => `topology-${randomBytes(5).toString('hex')}@sandbox.test`;

  it('admits exactly the per-address limit of parallel attempts, the rest with a wait', async () => {
    const address = email();
    const attempts = await Promise.all(
      Array.from({ length: 20 }, () => throttle.attempt(address, '198.51.100.20')),
    );
    const admitted = attempts.filter((a) => a.admitted);
    expect(admitted).toHaveLength(SIGN_IN_LIMITS.perAddress.failures);
    for (const refused of attempts.filter((a) => !a.admitted)) {
      expect(refused).toMatchObject({ admitted: false });
      expect((refused as { retryAfterSeconds: number }).retryAfterSeconds).toBeGreaterThan(60);
    }
    // Another address of the same account is still admitted (per-account limit not reached).
    expect((await throttle.attempt(address, '203.0.113.30')).admitted).toBe(true);
  });

  it('gives the reservation back on success: the address’s counter is cleared', async () => {
    const address = email();
    for (let i = 0; i < SIGN_IN_LIMITS.perAddress.failures - 1; i += 1) {
      expect((await throttle.attempt(address, '198.51.100.21')).admitted).toBe(true);
    }
    const last = await throttle.attempt(address, '198.51.100.21');
    expect(last.admitted).toBe(true);
    if (last.admitted) await last.succeeded();
    for (let i = 0; i < SIGN_IN_LIMITS.perAddress.failures; i += 1) {
      expect((await throttle.attempt(address, '198.51.100.21')).admitted).toBe(true);
    }
    expect((await throttle.attempt(address, '198.51.100.21')).admitted).toBe(false);
  });
});

// ---- Sentinel failover under traffic ----------------------------------------------------------

const introspector = new StandInIntrospector();
const issueToken = (clientId: string) => introspector.issue(clientId).token;

@Controller('v1/failover-probe')
class FailoverProbeController {
  @Get()
  @BearerAuth()
  get(@Principal() principal: Principal) {
    return { client_id: principal.client_id };
  }
}

@Module({ controllers: [FailoverProbeController] })
class FailoverProbeModule {}

interface Seen {
  readonly at: number;
  readonly status: number;
  readonly type?: string;
}

async function call(url: string, token: string): Promise<Seen> {
  const at = Date.now();
  try {
    const response = await fetch(`${url}/v1/failover-probe`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const text = await response.text();
    const problem = response.headers.get('content-type')?.startsWith('application/problem+json');
    return {
      at,
      status: response.status,
      type: problem ? (JSON.parse(text) as { type: string }).type : undefined,
    };
  } catch {
    return { at, status: 0 };
  }
}

describe('a Sentinel failover under traffic', () => {
  const LIMIT = 20;
  let app: NestFastifyApplication;
  let url: string;
  let appRedis: Redis;
  let inspector: Redis;

  beforeAll(async () => {
    const topology = topologies!.sentinel;
    // The app reads its Redis the way it does in production: REDIS_SENTINELS and the master name.
    const redisConfig = loadConfig(REDIS_CONFIG, { ...topology.env });
    ({ app, url } = await startBearerProbe(introspector, [FailoverProbeModule], {
      ...redisConfig,
      ...loadConfig(RATE_LIMIT_CONFIG, { RATE_LIMIT_PER_MINUTE: String(LIMIT) }),
    }));
    appRedis = await redisReady(app.get<Redis>(REDIS));
    inspector = (await redisReady(createRedis(topology.config))) as Redis;
    inspector.on('error', () => undefined);
  });

  afterAll(async () => {
    await app?.close();
    await inspector?.quit().catch(() => inspector.disconnect());
  });

  it('answers 503 Problems while it lasts, never admits over the limit or a revoked token, and resumes by itself', async () => {
    const exhausted = `partner-${randomBytes(5).toString('hex')}`;
    const exhaustedToken = issueToken(exhausted);
    const revokedClient = `partner-${randomBytes(5).toString('hex')}`;
    const revokedToken = issueToken(revokedClient);
    // A fresh client for each round, so the live traffic never meets its own limit.
    let live = `partner-${randomBytes(5).toString('hex')}`;
    const liveToken = () => {
      live = `partner-${randomBytes(5).toString('hex')}`;
      return issueToken(live);
    };

    // Before: one client at its limit, one token cached active and then tombstoned.
    for (let i = 0; i < LIMIT; i += 1) expect((await call(url, exhaustedToken)).status).toBe(200);
    expect((await call(url, exhaustedToken)).status).toBe(429);
    expect((await call(url, revokedToken)).status).toBe(200);
    // A revocation as auth-server makes it: the tombstone first, then its database says inactive
    // (what a reader that cannot reach Redis during the failover is told).
    await app.get(IntrospectionCache).tombstone(revokedClient, [sha256Hex(revokedToken)]);
    introspector.answers.set(sha256Hex(revokedToken), { active: false });
    expect((await call(url, revokedToken)).status).toBe(401);
    // The replica has both (replication is asynchronous; a write the primary lost with it is
    // the documented window, not what this test is about).
    expect(await inspector.wait(1, 2000)).toBe(1);

    const seen: { live: Seen[]; exhausted: Seen[]; revoked: Seen[]; ready: number[] } = {
      live: [],
      exhausted: [],
      revoked: [],
      ready: [],
    };
    let running = true;
    const traffic = (async () => {
      while (running) {
        const [a, b, c, r] = await Promise.all([
          call(url, liveToken()),
          call(url, exhaustedToken),
          call(url, revokedToken),
          fetch(`${url}/readyz`).then(
            (res) => res.status,
            () => 0,
          ),
        ]);
        seen.live.push(a);
        seen.exhausted.push(b);
        seen.revoked.push(c);
        seen.ready.push(r);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    })();

    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = Date.now();
    const { from, to } = await topologies!.sentinel.failover();
    const promoted = Date.now();
    // Service resumes without restarting anything: the app's client finds the new primary.
    const resumed = await eventually(
      async () => ((await call(url, liveToken())).status === 200 ? Date.now() : undefined),
      15_000,
      50,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    running = false;
    await traffic;

    expect(to).not.toBe(from);
    expect(await topologies!.sentinel.primaryPort()).toBe(to);
    expect(appRedis.status).toBe('ready');

    const unavailable = `https://docs.test/docs/errors/service_unavailable`;
    // Every answer is the app's own: success, or a 503 Problem (never a 500, a hang or a reset).
    for (const s of seen.live) {
      if (s.status !== 200) expect(s).toMatchObject({ status: 503, type: unavailable });
    }
    // The exhausted client is never admitted: 429 or 503, before, during and after.
    for (const s of seen.exhausted) {
      expect([429, 503]).toContain(s.status);
      if (s.status === 503) expect(s.type).toBe(unavailable);
    }
    // The revoked token is never accepted.
    for (const s of seen.revoked) {
      expect([401, 503]).toContain(s.status);
    }
    // Readiness does not take the pod out of rotation for a shared dependency's blip.
    expect(seen.ready.every((status) => status === 200)).toBe(true);
    // After: the new primary counts (the live client's admissions are there) and takes tombstones.
    expect((await call(url, liveToken())).status).toBe(200);
    // One time each, after the list's header.
    expect(await inspector.llen(rateLimitKey(live))).toBe(1 + 1);
    expect(await inspector.llen(rateLimitKey(exhausted))).toBe(1 + LIMIT);
    const laterClient = `partner-${randomBytes(5).toString('hex')}`;
    const later = issueToken(laterClient);
    expect((await call(url, later)).status).toBe(200);
    // A revocation waits for an attached replica to hold its tombstone; while the demoted primary
    // is rejoining (attached, not yet in sync) it can be refused (503) and its caller retries, as here.
    let revocationsRefused = 0;
    await eventually(
      async () => {
        try {
          await app.get(IntrospectionCache).tombstone(laterClient, [sha256Hex(later)]);
          return true;
        } catch (err) {
          if (!(err instanceof IntrospectionCacheUnavailableError)) throw err;
          revocationsRefused += 1;
          return undefined;
        }
      },
      20_000,
      100,
    );
    const revocationsBack = Date.now();
    introspector.answers.set(sha256Hex(later), { active: false });
    expect((await call(url, later)).status).toBe(401);
    expect(await inspector.exists(partnerTombstoneKey(laterClient, sha256Hex(later)))).toBe(1);

    const refused = seen.live.filter((s) => s.status === 503);
    const window = refused.length > 0 ? refused[refused.length - 1].at - refused[0].at : 0;
    // The figures the docs quote; Jest prints them with the test's output.
    console.log(
      `sentinel failover ${from} -> ${to}: sentinels named the new primary after ${promoted - started} ms, ` +
        `first 200 after ${resumed - started} ms; ${refused.length} of ${seen.live.length} live requests ` +
        `answered 503 over ${window} ms; ${seen.exhausted.filter((s) => s.status === 503).length} exhausted ` +
        `and ${seen.revoked.filter((s) => s.status === 503).length} revoked answered 503; revocations ` +
        `accepted again after ${revocationsBack - started} ms (${revocationsRefused} refused meanwhile)`,
    );
  });
});

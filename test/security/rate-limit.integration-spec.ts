import { Controller, Get, Module, Req, Res } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { introspectionCacheKey, stateGenerationKey } from '@svc/contracts';
import {
  createRedis,
  loadConfig,
  PlatformModule,
  REDIS,
  RedisModule,
  sha256Hex,
  type RedisClient,
} from '@svc/platform';
import {
  BearerAuth,
  IntrospectionCache,
  Principal,
  RATE_LIMIT_CONFIG,
  RateLimiter,
  RedisRateLimiter,
  SecurityModule,
} from '@svc/security';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type Redis from 'ioredis';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { rateLimitKey } from '../../libs/security/src/limits/rate-limit';
import { redisReady, StandInIntrospector, startBearerProbe, startHttpApp } from '../support/http-app';
import { eventually, testServices } from '../support/services';
import { startTopologies, TOPOLOGY_NAMES, type Topologies } from '../support/redis-topologies';

/**
 * The per-partner rate limiter against real Redis (docs/rules.md "Rate limits"): a probe app wired
 * the way crew-api is (PlatformModule, RedisModule, SecurityModule, `@BearerAuth()` on `/v1/*`),
 * a stand-in introspector instead of auth-server, and two replica processes for exactness, which
 * is shown against the run's Redis, a private Redis Cluster and a private Sentinel set alike.
 * Every test uses client_ids of its own, so no two tests share a bucket.
 */
const services = testServices();
const ROOT = path.resolve(__dirname, '../..');

jest.setTimeout(60_000);

// ---- tokens -----------------------------------------------------------------------------------

/** What auth-server would answer for each token digest; unknown digests are inactive. */
const introspector = new StandInIntrospector();
const answers = introspector.answers;

const newClientId = () => `partner-${randomBytes(6).toString('hex')}`;

/** A live token of this partner; another token of the same partner shares its bucket. */
const issueToken = (clientId: string, scopes?: string[]) => introspector.issue(clientId, scopes).token;

// ---- probe app --------------------------------------------------------------------------------

@Controller('v1/rate-probe')
class RateProbeController {
  /** Any live token (the shape of `/v1/webhooks/test`). */
  @Get('any')
  @BearerAuth()
  any(@Principal() principal: Principal) {
    return { client_id: principal.client_id };
  }

  /** Needs a scope: a token without it gets 403, after the rate limit. */
  @Get('vessels')
  @BearerAuth('vessels:read')
  vessels() {
    return { vessels: [] };
  }

  /** A conditional GET the way crew-api answers it: 304 without a body when the tag matches. */
  @Get('conditional')
  @BearerAuth()
  conditional(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    reply.header('etag', '"v1"');
    if (request.headers['if-none-match'] === '"v1"') {
      reply.status(304);
      return undefined;
    }
    return { version: 1 };
  }
}

@Module({ controllers: [RateProbeController] })
class RateProbeModule {}

/** Windows short enough to watch them slide (2 s and 5 s, 3 and 5 requests). */
const SLIDING = { minute: { limit: 3, windowMs: 2_000 }, day: { limit: 5, windowMs: 5_000 } };

@Controller('v1/sliding-probe')
class SlidingProbeController {
  @Get()
  @BearerAuth()
  get() {
    return {};
  }
}

@Module({ controllers: [SlidingProbeController] })
class SlidingProbeModule {}

interface ProbeApp {
  readonly app: NestFastifyApplication;
  readonly url: string;
  readonly redis: Redis;
}

/** Limits through the app's validated config, exactly as an app gets them. */
async function startProbeApp(redisUrl: string, limits: Record<string, string> = {}): Promise<ProbeApp> {
  const { app, url } = await startBearerProbe(introspector, [RateProbeModule], {
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: services.redisKeyPrefix,
    ...loadConfig(RATE_LIMIT_CONFIG, limits),
  });
  return { app, url, redis: app.get<Redis>(REDIS) };
}

/** A probe app whose one limiter (the bearer strategy's and RateLimitGuard's) has the SLIDING windows. */
async function startSlidingApp(): Promise<ProbeApp> {
  const security = SecurityModule.forRoot({ introspector: { useValue: introspector } });
  const providers = (security.providers ?? []).map((provider) =>
    typeof provider === 'object' && 'provide' in provider && provider.provide === RateLimiter
      ? {
          provide: RateLimiter,
          inject: [REDIS],
          useFactory: (redis: Redis) => new RedisRateLimiter(redis, SLIDING),
        }
      : provider,
  );
  const { app, url } = await startHttpApp(
    'crew-api',
    (platform) => ({
      module: class SlidingProbeRoot {},
      imports: [
        PlatformModule.forRoot(platform),
        RedisModule.forRoot(),
        { ...security, providers, exports: providers },
        SlidingProbeModule,
      ],
    }),
    { REDIS_URL: services.redisUrl, REDIS_KEY_PREFIX: services.redisKeyPrefix },
  );
  return { app, url, redis: await redisReady(app.get<Redis>(REDIS)) };
}

/** A port nothing listens on: Redis "unreachable" without touching the shared server. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * A relay in front of the real Redis that can stop passing Redis's answers on while keeping the
 * connection open: a Redis that hangs, which only the client's command timeout can detect.
 */
class FreezableRelay {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private frozen = false;

  constructor(private readonly target: URL) {
    this.server = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 6379), target.hostname);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('error', () => s.destroy());
        s.on('close', () => this.sockets.delete(s));
      }
      client.pipe(upstream);
      upstream.on('data', (chunk: Buffer) => {
        if (!this.frozen) client.write(chunk);
      });
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const relayed = new URL(this.target.toString());
    relayed.hostname = '127.0.0.1';
    relayed.port = String((this.server.address() as net.AddressInfo).port);
    return relayed.toString();
  }

  freeze() {
    this.frozen = true;
  }

  async stop() {
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

// ---- HTTP helpers -----------------------------------------------------------------------------

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
}

async function get(
  base: string,
  route: string,
  token?: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await fetch(`${base}${route}`, {
    headers: token === undefined ? headers : { ...headers, authorization: `Bearer ${token}` },
  });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

/** The three headers as numbers (undefined when absent). */
function rateHeaders(answer: Answer) {
  const n = (name: string) => {
    const value = answer.headers.get(name);
    return value === null ? undefined : Number(value);
  };
  return {
    limit: n('x-ratelimit-limit'),
    remaining: n('x-ratelimit-remaining'),
    reset: n('x-ratelimit-reset'),
  };
}

function expectProblem(answer: Answer, status: number, code: string) {
  expect(answer.status).toBe(status);
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = JSON.parse(answer.body) as Record<string, unknown>;
  expect(body).toMatchObject({ type: `https://docs.test/docs/errors/${code}`, status });
  expect(body.instance).toBe(answer.headers.get('x-request-id'));
  return body;
}

const nowSeconds = () => Date.now() / 1000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- replica processes ------------------------------------------------------------------------

/**
 * One replica: a process of its own with its own Redis connection, booting the same probe
 * controller through the real libs (TypeScript compiled on load by SWC, as Jest does). Prints
 * `listening <url>` once it serves.
 */
const REPLICA_SOURCE = String.raw`
const path = require('node:path');
const root = process.env.PROBE_ROOT;
require(path.join(root, 'scripts/lib/ts-register.cjs'));

const { Controller, Get, Module: NestModule } = require('@nestjs/common');
const { loadConfig, PlatformModule, REDIS_CONFIG, RedisModule } = require('@svc/platform');
const { BearerAuth, RATE_LIMIT_CONFIG, SecurityModule } = require('@svc/security');
const { startHttpApp } = require(path.join(root, 'test/support/http-app.ts'));

class RateProbeController {
  any() {
    return {};
  }
}
const any = Object.getOwnPropertyDescriptor(RateProbeController.prototype, 'any');
Get('any')(RateProbeController.prototype, 'any', any);
BearerAuth()(RateProbeController.prototype, 'any', any);
Controller('v1/rate-probe')(RateProbeController);
class ProbeModule {}
NestModule({ controllers: [RateProbeController] })(ProbeModule);

const answers = new Map(JSON.parse(process.env.PROBE_TOKENS));
const introspector = { introspect: async (digest) => answers.get(digest) ?? { active: false } };

startHttpApp(
  'crew-api',
  (platform) => ({
    module: class ReplicaRoot {},
    imports: [
      PlatformModule.forRoot(platform),
      RedisModule.forRoot(),
      SecurityModule.forRoot({ introspector: { useValue: introspector } }),
      ProbeModule,
    ],
  }),
  {
    ...loadConfig(REDIS_CONFIG, process.env),
    ...loadConfig(RATE_LIMIT_CONFIG, { RATE_LIMIT_PER_MINUTE: process.env.RATE_LIMIT_PER_MINUTE }),
  },
).then(async ({ app, url }) => {
  const { REDIS } = require('@svc/platform');
  const redis = app.get(REDIS);
  while (redis.status !== 'ready') await new Promise((r) => setTimeout(r, 50));
  process.on('SIGTERM', () => void app.close().finally(() => process.exit(0)));
  process.stdout.write('listening ' + url + '\n');
}, (err) => {
  process.stderr.write(String(err && err.stack) + '\n');
  process.exit(1);
});
`;

interface Replica {
  readonly process: ChildProcess;
  readonly url: string;
}

function startReplica(tokens: string[], redisEnv: Readonly<Record<string, string>>): Promise<Replica> {
  const child = spawn(process.execPath, ['-e', REPLICA_SOURCE], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      PROBE_ROOT: ROOT,
      APP_ENV: 'sandbox',
      ...redisEnv,
      PROBE_TOKENS: JSON.stringify(tokens.map((t) => [sha256Hex(t), answers.get(sha256Hex(t))])),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`replica did not start within 30 s:\n${stderr}`));
    }, 30_000);
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /listening (\S+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve({ process: child, url: match[1] });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`replica exited with ${code}:\n${stderr}`));
    });
  });
}

async function stopReplica(replica: Replica | undefined) {
  if (!replica || replica.process.exitCode !== null) return;
  const exited = new Promise((resolve) => replica.process.once('exit', resolve));
  replica.process.kill('SIGTERM');
  const timer = setTimeout(() => replica.process.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

// ---- lifecycle --------------------------------------------------------------------------------

// One probe app at a time in this process: passport keeps one `bearer` strategy per process, the
// last app's, as a deployment runs one app per process. A second process is a replica.
let inspector: Redis;
let topologies: Topologies | undefined;

beforeAll(async () => {
  topologies = await startTopologies(services.redisUrl, services.redisKeyPrefix);
  inspector = await redisReady(
    createRedis({ REDIS_URL: services.redisUrl, REDIS_KEY_PREFIX: services.redisKeyPrefix }),
  );
});

afterAll(async () => {
  await inspector?.quit();
  await topologies?.stop();
});

/** The times counted in the client's list (after its header). */
const bucketSize = async (clientId: string) =>
  Math.max(0, (await inspector.llen(rateLimitKey(clientId))) - 1);

// ---- tests ------------------------------------------------------------------------------------

/**
 * The run's Redis keeps the full-size case (the default 600 per minute); the private Cluster and
 * Sentinel set run the same body smaller, to keep the tier fast on a shared 2-core machine. The
 * limit stays above half the requests, so each replica process must admit some of them.
 */
const EXACTNESS = {
  single: { limit: 600, requests: 1000 },
  cluster: { limit: 120, requests: 200 },
  sentinel: { limit: 120, requests: 200 },
} as const;

describe.each(TOPOLOGY_NAMES)(
  'exactness under concurrency (docs/rules.md: no client ever admitted more than its limit), Redis %s',
  (topologyName) => {
    const { limit, requests } = EXACTNESS[topologyName];
    let replicas: Replica[] = [];
    let inspector: RedisClient;
    const bucketSize = async (clientId: string) =>
      Math.max(0, (await inspector.llen(rateLimitKey(clientId))) - 1);

    beforeAll(async () => {
      inspector = await redisReady(createRedis(topologies![topologyName].config));
    });

    afterAll(async () => {
      await Promise.all(replicas.map(stopReplica));
      await inspector?.quit();
    });

    it(`admits exactly ${limit} of ${requests} parallel requests of one client spread over two replica processes`, async () => {
      const clientId = newClientId();
      // Two tokens (two crew members) of one partner: the bucket is the partner's, not the token's.
      const tokens = [issueToken(clientId), issueToken(clientId)];
      const { env } = topologies![topologyName];
      const replicaEnv = { ...env, RATE_LIMIT_PER_MINUTE: String(limit) };
      replicas = await Promise.all([startReplica(tokens, replicaEnv), startReplica(tokens, replicaEnv)]);
      expect(new Set(replicas.map((r) => r.process.pid)).size).toBe(2);

      const started = nowSeconds();
      const answers = await Promise.all(
        Array.from({ length: requests }, (_, i) =>
          get(replicas[i % 2].url, '/v1/rate-probe/any', tokens[(i >> 1) % 2]),
        ),
      );

      const admitted = answers.filter((a) => a.status === 200);
      const refused = answers.filter((a) => a.status === 429);
      // On a starved machine a reply can miss the 1 s command timeout: that request fails closed
      // with 503 (it may have been counted, it was not served). Never over the limit either way;
      // exactly the limit whenever every reply arrived in time.
      const unavailable = answers.filter((a) => a.status === 503);
      for (const a of unavailable) expectProblem(a, 503, 'service_unavailable');
      expect(admitted.length + refused.length + unavailable.length).toBe(requests);
      expect(admitted.length).toBeLessThanOrEqual(limit);
      if (unavailable.length === 0) {
        expect({ admitted: admitted.length, refused: refused.length }).toEqual({
          admitted: limit,
          refused: requests - limit,
        });
      } else {
        process.stdout.write(
          `exactness on ${topologyName}: ${unavailable.length} of ${requests} answered 503\n`,
        );
      }
      // Each replica got half and admitted some of them: per-replica counting would have admitted
      // all of them; the `limit` come out of the one bucket both share.
      const admittedBy = replicas.map(
        (_, r) => answers.filter((a, i) => i % 2 === r && a.status === 200).length,
      );
      expect(admittedBy.every((n) => n > 0 && n <= requests / 2)).toBe(true);

      // Every admission saw a different count: the remaining values are limit − 1, …, 0, each once.
      const remaining = admitted.map((a) => rateHeaders(a).remaining!).sort((a, b) => a - b);
      expect(new Set(remaining).size).toBe(remaining.length);
      expect(remaining.every((n) => n >= 0 && n < limit)).toBe(true);
      if (unavailable.length === 0) expect(remaining).toEqual(Array.from({ length: limit }, (_, i) => i));
      for (const a of admitted) expect(rateHeaders(a).limit).toBe(limit);

      for (const a of refused) {
        const body = expectProblem(a, 429, 'rate_limit_exceeded');
        expect(body.title).toBe('Rate limit exceeded');
        const retryAfter = Number(a.headers.get('retry-after'));
        expect(Number.isInteger(retryAfter)).toBe(true);
        expect(retryAfter).toBeGreaterThanOrEqual(1);
        expect(retryAfter).toBeLessThanOrEqual(60);
        const headers = rateHeaders(a);
        expect(headers).toMatchObject({ limit, remaining: 0 });
        expect(headers.reset).toBeGreaterThanOrEqual(Math.floor(started) + 59);
        expect(headers.reset).toBeLessThanOrEqual(Math.ceil(nowSeconds()) + 60);
      }
      // Refusals were not recorded: the bucket holds the admissions only, never more than the limit.
      const counted = await bucketSize(clientId);
      expect(counted).toBeLessThanOrEqual(limit);
      expect(counted).toBeGreaterThanOrEqual(admitted.length);
      if (unavailable.length === 0) expect(counted).toBe(limit);
    });
  },
);

describe('headers and counting (docs/rules.md "Limits")', () => {
  /** 5 per minute, 8 per day, real windows: small enough to count down by hand. */
  let small: ProbeApp;

  beforeAll(async () => {
    small = await startProbeApp(services.redisUrl, { RATE_LIMIT_PER_MINUTE: '5', RATE_LIMIT_PER_DAY: '8' });
    await redisReady(small.redis);
  });

  afterAll(async () => {
    await small?.app.close();
  });

  it('counts down in the tighter window, refuses the sixth request per minute, and refusals are not counted', async () => {
    const clientId = newClientId();
    const token = issueToken(clientId);
    const before = nowSeconds();

    const seen: ReturnType<typeof rateHeaders>[] = [];
    for (let i = 0; i < 5; i++) {
      const answer = await get(small.url, '/v1/rate-probe/any', token);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('retry-after')).toBeNull();
      seen.push(rateHeaders(answer));
    }
    // Minute: 4, 3, 2, 1, 0 left; day: 7, 6, 5, 4, 3 left: the minute window is the tighter one.
    expect(seen.map((h) => [h.limit, h.remaining])).toEqual([
      [5, 4],
      [5, 3],
      [5, 2],
      [5, 1],
      [5, 0],
    ]);
    // The minute window frees its next slot when the first request is 60 s old.
    const reset = seen[0].reset!;
    expect(seen.every((h) => h.reset === reset)).toBe(true);
    expect(reset).toBeGreaterThanOrEqual(Math.floor(before) + 60);
    expect(reset).toBeLessThanOrEqual(Math.ceil(nowSeconds()) + 60);

    const refused = await get(small.url, '/v1/rate-probe/any', token);
    expectProblem(refused, 429, 'rate_limit_exceeded');
    expect(rateHeaders(refused)).toEqual({ limit: 5, remaining: 0, reset });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(Math.abs(nowSeconds() + retryAfter - reset)).toBeLessThanOrEqual(1.5);

    // Knocking again changes nothing: no refusal is recorded, the wait does not grow.
    for (let i = 0; i < 3; i++) {
      const again = await get(small.url, '/v1/rate-probe/any', token);
      expect(again.status).toBe(429);
      expect(rateHeaders(again).reset).toBe(reset);
      expect(Number(again.headers.get('retry-after'))).toBeLessThanOrEqual(retryAfter);
    }
    expect(await bucketSize(clientId)).toBe(5);
  });

  it('keeps one list per client under the environment’s key prefix, expiring after 24 h', async () => {
    const clientId = newClientId();
    expect((await get(small.url, '/v1/rate-probe/any', issueToken(clientId))).status).toBe(200);
    const times = rateLimitKey(clientId);
    const ttl = await inspector.pttl(times);
    expect(ttl).toBeGreaterThan(86_400_000 - 60_000);
    expect(ttl).toBeLessThanOrEqual(86_400_000);
    expect(await inspector.type(times)).toBe('list');
    // The prefix isolates environments: the raw keys carry it.
    const raw = createRedis({ REDIS_URL: services.redisUrl, REDIS_KEY_PREFIX: '' });
    try {
      await redisReady(raw);
      expect(await raw.exists(`${services.redisKeyPrefix}${times}`)).toBe(1);
    } finally {
      await raw.quit();
    }
  });

  it('counts a 403 (missing scope) and puts the headers on it', async () => {
    const clientId = newClientId();
    const token = issueToken(clientId, ['profile:read']);

    const forbidden = await get(small.url, '/v1/rate-probe/vessels', token);
    expectProblem(forbidden, 403, 'insufficient_scope');
    expect(forbidden.headers.get('www-authenticate')).toBe(
      'Bearer error="insufficient_scope", scope="vessels:read"',
    );
    expect(rateHeaders(forbidden)).toMatchObject({ limit: 5, remaining: 4 });

    const next = await get(small.url, '/v1/rate-probe/any', token);
    expect(rateHeaders(next)).toMatchObject({ limit: 5, remaining: 3 });
  });

  it('counts a 304 and puts the headers on it', async () => {
    const clientId = newClientId();
    const token = issueToken(clientId);

    const full = await get(small.url, '/v1/rate-probe/conditional', token);
    expect(full.status).toBe(200);
    expect(rateHeaders(full)).toMatchObject({ limit: 5, remaining: 4 });

    const notModified = await get(small.url, '/v1/rate-probe/conditional', token, {
      'if-none-match': '"v1"',
    });
    expect(notModified.status).toBe(304);
    expect(notModified.body).toBe('');
    expect(rateHeaders(notModified)).toMatchObject({ limit: 5, remaining: 3 });
    expect(rateHeaders(notModified).reset).toBe(rateHeaders(full).reset);
    expect(await bucketSize(clientId)).toBe(2);
  });

  it('neither counts nor describes a request that fails authentication (401)', async () => {
    const clientId = newClientId();
    const unknown = await get(small.url, '/v1/rate-probe/any', `at_${randomBytes(32).toString('base64url')}`);
    expectProblem(unknown, 401, 'invalid_token');
    expect(rateHeaders(unknown)).toEqual({ limit: undefined, remaining: undefined, reset: undefined });
    expect(await bucketSize(clientId)).toBe(0);
  });

  it('leaves a second client untouched by the first one’s exhaustion', async () => {
    const first = newClientId();
    const second = newClientId();
    const firstToken = issueToken(first);
    for (let i = 0; i < 5; i++) await get(small.url, '/v1/rate-probe/any', firstToken);
    expect((await get(small.url, '/v1/rate-probe/any', firstToken)).status).toBe(429);

    const other = await get(small.url, '/v1/rate-probe/any', issueToken(second));
    expect(other.status).toBe(200);
    expect(rateHeaders(other)).toMatchObject({ limit: 5, remaining: 4 });
  });

  it('costs an admitted request one Redis command: the script that checks the token’s tombstone and counts', async () => {
    const token = issueToken(newClientId());
    // Warm: the token's answer is known to the process and the script to Redis.
    expect((await get(small.url, '/v1/rate-probe/any', token)).status).toBe(200);

    const commands = jest.spyOn(small.redis, 'sendCommand');
    try {
      const answer = await get(small.url, '/v1/rate-probe/any', token);
      expect(answer.status).toBe(200);
      expect(rateHeaders(answer)).toMatchObject({ limit: 5, remaining: 3 });
      expect(commands.mock.calls.map(([command]) => command.name)).toEqual(['evalsha']);
    } finally {
      commands.mockRestore();
    }
  });

  it('refuses a known token on the next request once auth-server tombstones it, and does not count that request', async () => {
    const clientId = newClientId();
    const token = issueToken(clientId);
    expect((await get(small.url, '/v1/rate-probe/any', token)).status).toBe(200);
    expect((await get(small.url, '/v1/rate-probe/any', token)).status).toBe(200);

    // What auth-server does before committing a revocation; its stand-in still calls the token
    // active, so only the tombstone can refuse it.
    await small.app.get(IntrospectionCache).tombstone(clientId, [sha256Hex(token)]);
    const refused = await get(small.url, '/v1/rate-probe/any', token);
    expectProblem(refused, 401, 'invalid_token');
    expect(rateHeaders(refused)).toEqual({ limit: undefined, remaining: undefined, reset: undefined });
    expect(await bucketSize(clientId)).toBe(2);
  });

  it('keeps the partner’s state generation beside its window; a new one (Redis lost the partner’s keys) makes the process ask auth-server again', async () => {
    const clientId = newClientId();
    const token = issueToken(clientId);
    expect((await get(small.url, '/v1/rate-probe/any', token)).status).toBe(200);
    const generation = await inspector.get(stateGenerationKey(clientId));
    expect(generation).toMatch(/^\d{16}$/);
    const ttl = await inspector.pttl(stateGenerationKey(clientId));
    expect(ttl).toBeGreaterThan(23 * 3_600_000);

    // As if the state Redis restarted empty after a revocation: its tombstones are gone with the
    // generation, and only auth-server still knows the token is dead.
    answers.set(sha256Hex(token), { active: false });
    expect((await get(small.url, '/v1/rate-probe/any', token)).status).toBe(200);
    await inspector.del(stateGenerationKey(clientId));
    expectProblem(await get(small.url, '/v1/rate-probe/any', token), 401, 'invalid_token');
    expect(await inspector.get(stateGenerationKey(clientId))).not.toBe(generation);
  });

  it('stamps a cached answer with the generation; another process, meeting a newer one, asks auth-server instead of trusting it', async () => {
    const clientId = newClientId();
    const token = issueToken(clientId);
    const digest = sha256Hex(token);
    expect((await get(small.url, '/v1/rate-probe/any', token)).status).toBe(200);
    const generation = await inspector.get(stateGenerationKey(clientId));
    const stored = await eventually(
      async () => (await inspector.get(introspectionCacheKey(digest))) ?? undefined,
    );
    // With the state Redis server that said it, so that a failover is a reset too.
    expect(JSON.parse(stored)).toMatchObject({
      active: true,
      client_id: clientId,
      generation: expect.stringMatching(new RegExp(`^${generation}@[0-9a-f]{40}$`)),
    });

    // The token is revoked, then the state Redis loses the partner's keys (its tombstones with
    // them); the cache Redis still holds the live answer. A process that never saw the token must
    // not take the cache's word for it.
    answers.set(digest, { active: false });
    await inspector.del(stateGenerationKey(clientId));
    const other = await startReplica([token], topologies!.single.env);
    try {
      expectProblem(await get(other.url, '/v1/rate-probe/any', token), 401, 'invalid_token');
    } finally {
      await stopReplica(other);
    }
  });
});

describe('the windows slide (2 s and 5 s windows, 3 and 5 requests)', () => {
  let small: ProbeApp;

  beforeAll(async () => {
    small = await startSlidingApp();
  });

  afterAll(async () => {
    await small?.app.close();
  });

  it('frees the minute window as its requests age out, then the day window becomes the tighter one', async () => {
    const token = issueToken(newClientId());
    const hit = () => get(small.url, '/v1/sliding-probe', token);

    for (const remaining of [2, 1, 0]) {
      const answer = await hit();
      expect(answer.status).toBe(200);
      expect(rateHeaders(answer)).toMatchObject({ limit: 3, remaining });
    }
    const refusedByMinute = await hit();
    expect(refusedByMinute.status).toBe(429);
    expect(rateHeaders(refusedByMinute)).toMatchObject({ limit: 3, remaining: 0 });
    const minuteWait = Number(refusedByMinute.headers.get('retry-after'));
    expect(minuteWait).toBeGreaterThanOrEqual(1);
    expect(minuteWait).toBeLessThanOrEqual(2);

    // Waiting as told is the way back in; the day window (5) has now fewer left than the minute's.
    await sleep(minuteWait * 1000);
    const afterWait = await hit();
    expect(afterWait.status).toBe(200);
    expect(rateHeaders(afterWait)).toMatchObject({ limit: 5, remaining: 1 });
    const last = await hit();
    expect(last.status).toBe(200);
    expect(rateHeaders(last)).toMatchObject({ limit: 5, remaining: 0 });

    const refusedByDay = await hit();
    expect(refusedByDay.status).toBe(429);
    expect(rateHeaders(refusedByDay)).toMatchObject({ limit: 5, remaining: 0 });
    const dayWait = Number(refusedByDay.headers.get('retry-after'));
    expect(dayWait).toBeGreaterThanOrEqual(1);
    expect(dayWait).toBeLessThanOrEqual(5);

    await sleep(dayWait * 1000);
    expect((await hit()).status).toBe(200);
  });
});

describe('with Redis unavailable: fail closed, fast (503 service_unavailable)', () => {
  describe('Redis cannot be reached', () => {
    let unreachable: ProbeApp;

    beforeAll(async () => {
      const deadUrl = new URL(services.redisUrl);
      deadUrl.hostname = '127.0.0.1';
      deadUrl.port = String(await closedPort());
      unreachable = await startProbeApp(deadUrl.toString());
    });

    afterAll(async () => {
      await unreachable?.app.close();
    });

    it('answers at once (the token still checks out with auth-server)', async () => {
      const token = issueToken(newClientId());
      const started = Date.now();
      const answer = await get(unreachable.url, '/v1/rate-probe/any', token);
      expectProblem(answer, 503, 'service_unavailable');
      expect(Date.now() - started).toBeLessThan(1000);
      expect(rateHeaders(answer)).toEqual({ limit: undefined, remaining: undefined, reset: undefined });
    });

    it('still answers /healthz, which is never metered', async () => {
      const response = await fetch(`${unreachable.url}/healthz`);
      expect(response.status).toBe(200);
      expect(response.headers.get('x-ratelimit-limit')).toBeNull();
    });
  });

  describe('Redis stops answering mid-connection', () => {
    let relay: FreezableRelay;
    let hanging: ProbeApp;

    beforeAll(async () => {
      relay = new FreezableRelay(new URL(services.redisUrl));
      hanging = await startProbeApp(await relay.start());
      await redisReady(hanging.redis);
    });

    afterAll(async () => {
      await hanging?.app.close();
      await relay?.stop();
    });

    it('answers within the 1 s command timeout', async () => {
      const clientId = newClientId();
      const token = issueToken(clientId);
      expect((await get(hanging.url, '/v1/rate-probe/any', token)).status).toBe(200);

      relay.freeze();
      // The token is cached in this app's Redis: its GET times out too, auth-server answers, and the
      // limiter's EVALSHA times out: two command timeouts at most.
      const started = Date.now();
      const answer = await get(hanging.url, '/v1/rate-probe/any', token);
      expectProblem(answer, 503, 'service_unavailable');
      expect(Date.now() - started).toBeLessThan(2_500);
    });
  });
});

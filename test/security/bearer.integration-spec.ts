import { Controller, Get, Module, UseGuards } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  AUTH_INTROSPECT,
  INTROSPECTION_CACHE_MAX_TTL_SECONDS,
  INTROSPECTION_TOMBSTONE_TTL_SECONDS,
  introspectionCacheKey,
  partnerTombstoneKey,
  RPC_QUEUES,
  type IntrospectResponse,
} from '@svc/contracts';
import {
  connectRpcServer,
  createRedis,
  MessagingModule,
  PlatformModule,
  REDIS,
  RedisModule,
  RpcModule,
  sha256Hex,
  type RedisClient,
  type RedisConfig,
} from '@svc/platform';
import {
  BearerAuth,
  BearerAuthGuard,
  IntrospectionCache,
  IntrospectionCacheUnavailableError,
  Principal,
  RequireScopes,
  ScopeGuard,
  SecurityModule,
} from '@svc/security';
import type Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { startHttpApp } from '../support/http-app';
import { appBrokerUrl } from '../../scripts/lib/credentials.cjs';
import { eventually, testServices } from '../support/services';
import { startTopologies, TOPOLOGY_NAMES, type Topologies } from '../support/redis-topologies';

/**
 * The bearer side of every resource app against real Redis and RabbitMQ: a probe app wired the
 * way crew-api is (PlatformModule, RedisModule, RpcModule, SecurityModule) and a stand-in
 * auth-server answering `auth.introspect` on the real RPC queue from a table this test controls.
 * The cache and its tombstones run against the run's Redis, a private Redis Cluster and a private
 * Sentinel set alike.
 */
const services = testServices();
const RPC_TIMEOUT_MS = 1000;

// Starting the private Redis Cluster and Sentinel set takes a few seconds.
jest.setTimeout(30_000);

// ---- stand-in auth-server ---------------------------------------------------------------------

/** What auth-server would answer for each token digest; unknown digests are inactive. */
const answers = new Map<string, IntrospectResponse>();
/** Every digest auth-server was asked about, in order. */
const asked: string[] = [];

@Controller()
class IntrospectResponder {
  @MessagePattern(AUTH_INTROSPECT.pattern)
  introspect(@Payload() payload: unknown): IntrospectResponse {
    const { token_digest } = AUTH_INTROSPECT.parseRequest(payload);
    asked.push(token_digest);
    return answers.get(token_digest) ?? { active: false };
  }
}

@Module({ controllers: [IntrospectResponder] })
class ResponderModule {}

async function startResponder(): Promise<NestFastifyApplication> {
  const { app } = await startHttpApp(
    'auth-server',
    (platform) => ({
      module: class StandInAuthServer {},
      imports: [PlatformModule.forRoot(platform), MessagingModule.forRoot(), ResponderModule],
    }),
    { AMQP_URL: services.amqpUrl, AMQP_PREFETCH: 10 },
  );
  connectRpcServer(app, { AMQP_PREFETCH: 10 }, RPC_QUEUES.authServer);
  await app.startAllMicroservices();
  return app;
}

// ---- resource app under test ------------------------------------------------------------------

@Controller('probe')
class ProbeController {
  /** Any live token (the shape of `/v1/webhooks/test`). */
  @Get('any')
  @BearerAuth()
  any(@Principal() principal: Principal) {
    return principal;
  }

  /** Spelled out with the guards, the way a controller may also write it. */
  @Get('vessels')
  @UseGuards(BearerAuthGuard, ScopeGuard)
  @RequireScopes('vessels:read')
  vessels(@Principal() principal: Principal) {
    return { user_id: principal.user_id };
  }
}

@Module({ controllers: [ProbeController] })
class ProbeModule {}

interface ResourceApp {
  readonly app: NestFastifyApplication;
  readonly url: string;
  readonly cache: IntrospectionCache;
  readonly redis: RedisClient;
}

async function startResourceApp(redis: string | RedisConfig): Promise<ResourceApp> {
  const { app, url } = await startHttpApp(
    'crew-api',
    (platform) => ({
      module: class ResourceRoot {},
      imports: [
        PlatformModule.forRoot(platform),
        RedisModule.forRoot(),
        RpcModule,
        SecurityModule.forRoot(),
        ProbeModule,
      ],
    }),
    {
      ...(typeof redis === 'string'
        ? { REDIS_URL: redis, REDIS_KEY_PREFIX: services.redisKeyPrefix }
        : redis),
      // As crew-api's own broker user: auth.introspect is answered to crew-api alone.
      AMQP_URL: appBrokerUrl('crew-api', services.amqpUrl),
      AMQP_PREFETCH: 10,
      RPC_TIMEOUT_MS,
    },
  );
  return { app, url, cache: app.get(IntrospectionCache), redis: app.get<RedisClient>(REDIS) };
}

/** Until its connection is up, an app skips the cache (no offline queue): wait for it. */
async function redisReady(app: ResourceApp): Promise<ResourceApp> {
  await eventually(async () => (app.redis.status === 'ready' ? true : undefined));
  return app;
}

/** A port nothing listens on: Redis "unreachable" without touching the shared server. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// ---- helpers ----------------------------------------------------------------------------------

const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();

/** A fresh token that auth-server considers live with these scopes. */
function issueToken(scopes: string[] = ['profile:read'], lifetimeSeconds = 3600) {
  const token = `at_${randomBytes(32).toString('base64url')}`;
  const digest = sha256Hex(token);
  const answer: Extract<IntrospectResponse, { active: true }> = {
    active: true,
    user_id: `usr_${randomBytes(8).toString('hex')}`,
    client_id: 'sandbox-partner',
    scopes,
    expires_at: inSeconds(lifetimeSeconds),
  };
  answers.set(digest, answer);
  return { token, digest, answer };
}

/** auth-server revokes the token in its database (the cache is the caller's business). */
function revokeAtAuthServer(digest: string) {
  answers.set(digest, { active: false });
}

const timesAsked = (digest: string) => asked.filter((d) => d === digest).length;

function get(app: ResourceApp, path: string, token?: string, headers: Record<string, string> = {}) {
  return fetch(`${app.url}${path}`, {
    headers: token === undefined ? headers : { ...headers, authorization: `Bearer ${token}` },
  });
}

async function expectProblem(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = (await response.json()) as Record<string, unknown>;
  expect(body).toMatchObject({ type: `https://docs.test/docs/errors/${code}`, status });
  expect(body.instance).toBe(response.headers.get('x-request-id'));
  return body;
}

/** A Redis URL nothing answers at: Redis "unreachable" without touching the shared server. */
async function unreachableRedisUrl(): Promise<string> {
  const deadUrl = new URL(services.redisUrl);
  deadUrl.hostname = '127.0.0.1';
  deadUrl.port = String(await closedPort());
  return deadUrl.toString();
}

// ---- lifecycle --------------------------------------------------------------------------------

// One resource app at a time: passport keeps one `bearer` strategy per process, the last app's,
// as a deployment runs one app per process.
let responder: NestFastifyApplication | undefined;
let inspector: Redis;
let topologies: Topologies | undefined;

beforeAll(async () => {
  topologies = await startTopologies(services.redisUrl, services.redisKeyPrefix);
  responder = await startResponder();
  inspector = createRedis({ REDIS_URL: services.redisUrl, REDIS_KEY_PREFIX: services.redisKeyPrefix });
});

afterAll(async () => {
  // Callers first (each describe closes its app): Nest's RMQ server does not catch a reply whose
  // publisher confirm is still pending when its channel closes ("Channel ended").
  await responder?.close();
  await inspector?.quit();
  await topologies?.stop();
});

// ---- tests ------------------------------------------------------------------------------------

describe('bearer authentication (RFC 6750)', () => {
  let resource: ResourceApp;

  beforeAll(async () => {
    resource = await redisReady(await startResourceApp(services.redisUrl));
  });

  afterAll(async () => {
    await resource?.app.close();
  });

  it('answers a request without credentials with 401 and a challenge without an error code (§3.1)', async () => {
    const response = await get(resource, '/probe/any');
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    await expectProblem(response, 401, 'invalid_token');
  });

  it('answers an unknown token with 401 error="invalid_token" (§3.1)', async () => {
    const response = await get(resource, '/probe/any', `at_${randomBytes(32).toString('base64url')}`);
    expect(response.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    await expectProblem(response, 401, 'invalid_token');
  });

  it('lets a live token through and hands the handler its principal', async () => {
    const { token, answer } = issueToken(['profile:read', 'vessels:read']);
    const response = await get(resource, '/probe/any', token);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      user_id: answer.user_id,
      client_id: 'sandbox-partner',
      scopes: ['profile:read', 'vessels:read'],
      expires_at: answer.expires_at,
    });
  });

  it('does not accept the token as an access_token query parameter (§2.3 is not offered)', async () => {
    const { token, digest } = issueToken();
    const response = await fetch(`${resource.url}/probe/any?access_token=${token}`);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    await expectProblem(response, 401, 'invalid_token');
    expect(timesAsked(digest)).toBe(0);
  });

  it('answers a token without the needed scope with 403 insufficient_scope and the scope in the challenge', async () => {
    const { token } = issueToken(['profile:read']);
    const response = await get(resource, '/probe/vessels', token);
    expect(response.headers.get('www-authenticate')).toBe(
      'Bearer error="insufficient_scope", scope="vessels:read"',
    );
    await expectProblem(response, 403, 'insufficient_scope');

    const { token: scoped } = issueToken(['vessels:read']);
    expect((await get(resource, '/probe/vessels', scoped)).status).toBe(200);
  });
});

describe.each(TOPOLOGY_NAMES)(
  'introspection cache (libs/contracts introspection.ts), Redis %s',
  (topologyName) => {
    let resource: ResourceApp;
    let inspector: RedisClient;

    beforeAll(async () => {
      const topology = topologies![topologyName];
      resource = await redisReady(await startResourceApp(topology.config));
      inspector = createRedis(topology.config);
      await eventually(async () => (inspector.status === 'ready' ? true : undefined));
      // A fresh app's RPC client needs a moment before auth-server's answers reach it.
      await eventually(async () =>
        (await get(resource, '/probe/any', issueToken().token)).status === 200 ? true : undefined,
      );
    });

    afterAll(async () => {
      await resource?.app.close();
      await inspector?.quit();
    });

    it('caches auth-server’s answer: the second request asks nobody and costs a GET and one script', async () => {
      const { token, digest, answer } = issueToken();
      expect((await get(resource, '/probe/any', token)).status).toBe(200);
      expect(timesAsked(digest)).toBe(1);
      // Stamped with the partner's generation and the state Redis server that said it.
      expect(JSON.parse((await inspector.get(introspectionCacheKey(digest))) ?? 'null')).toEqual({
        ...answer,
        generation: expect.stringMatching(/^\d+@(cluster|[0-9a-f]{40})$/),
      });
      const ttl = await inspector.ttl(introspectionCacheKey(digest));
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(INTROSPECTION_CACHE_MAX_TTL_SECONDS);

      // A Cluster client sends through its node connections; the single/Sentinel client counts.
      const commands =
        topologyName === 'cluster' ? undefined : jest.spyOn(resource.redis as Redis, 'sendCommand');
      try {
        expect((await get(resource, '/probe/any', token)).status).toBe(200);
        // The cache shares this Redis here (no REDIS_CACHE_*): the answer, then the token's tombstone
        // and the partner's generation in one script. (A route that is not metered, like this one,
        // remembers nothing in the process.)
        if (commands) expect(commands.mock.calls.map(([command]) => command.name)).toEqual(['get', 'eval']);
      } finally {
        commands?.mockRestore();
      }
      expect(timesAsked(digest)).toBe(1);
    });

    it('never keeps an active answer past the token’s own expiry', async () => {
      const { token, digest } = issueToken(['profile:read'], 5);
      expect((await get(resource, '/probe/any', token)).status).toBe(200);
      const ttl = await inspector.ttl(introspectionCacheKey(digest));
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(5);
    });

    it('caches an inactive answer as well', async () => {
      const token = `at_${randomBytes(32).toString('base64url')}`;
      const digest = sha256Hex(token);
      expect((await get(resource, '/probe/any', token)).status).toBe(401);
      expect((await get(resource, '/probe/any', token)).status).toBe(401);
      expect(timesAsked(digest)).toBe(1);
      expect(await inspector.get(introspectionCacheKey(digest))).toBe('{"active":false}');
    });

    it('rejects a cached token on the very next request once a revocation tombstones it', async () => {
      const { token, digest } = issueToken();
      expect((await get(resource, '/probe/any', token)).status).toBe(200);
      expect((await get(resource, '/probe/any', token)).status).toBe(200);

      // What auth-server does before committing a revocation. Its table still says "active" here,
      // so only the tombstone can make the next request fail.
      await resource.cache.tombstone('sandbox-partner', [digest]);
      const response = await get(resource, '/probe/any', token);
      expect(response.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
      await expectProblem(response, 401, 'invalid_token');
      expect(timesAsked(digest)).toBe(1);
      const ttl = await inspector.ttl(partnerTombstoneKey('sandbox-partner', digest));
      expect(ttl).toBeGreaterThan(INTROSPECTION_CACHE_MAX_TTL_SECONDS);
      expect(ttl).toBeLessThanOrEqual(INTROSPECTION_TOMBSTONE_TTL_SECONDS);
    });

    it('lets a tombstone win over a stale answer stored after it', async () => {
      const { token, digest, answer } = issueToken();
      // The revocation lands between a reader's database read and its cache write.
      await resource.cache.tombstone('sandbox-partner', [digest]);
      await expect(resource.cache.putIfAbsent(digest, answer)).resolves.toBe(true);

      // The cache holds the live answer; the tombstone, checked after it, wins.
      expect((await get(resource, '/probe/any', token)).status).toBe(401);
      expect(timesAsked(digest)).toBe(0);
    });

    it('tombstones several partners’ tokens at once, whatever slots their keys hash to', async () => {
      // 40 partners land on every primary of a three-node Cluster (a MULTI over them is CROSSSLOT).
      const tokens = Array.from({ length: 40 }, (_, i) => {
        const issued = issueToken();
        const clientId = `partner-${i}-${randomBytes(4).toString('hex')}`;
        answers.set(issued.digest, { ...issued.answer, client_id: clientId });
        return { ...issued, clientId };
      });
      expect((await get(resource, '/probe/any', tokens[0].token)).status).toBe(200);
      await resource.cache.tombstoneEach(tokens.map(({ clientId, digest }) => ({ clientId, digest })));
      for (const { token, digest, clientId } of tokens) {
        expect((await get(resource, '/probe/any', token)).status).toBe(401);
        expect(await inspector.exists(partnerTombstoneKey(clientId, digest))).toBe(1);
      }
    });
  },
);

describe('with Redis unreachable (fail closed: auth-server decides every request)', () => {
  let redisDown: ResourceApp;

  beforeAll(async () => {
    redisDown = await startResourceApp(await unreachableRedisUrl());
  });

  afterAll(async () => {
    await redisDown?.app.close();
  });

  it('still lets a live token through, asking auth-server each time', async () => {
    const { token, digest } = issueToken();
    expect((await get(redisDown, '/probe/any', token)).status).toBe(200);
    expect((await get(redisDown, '/probe/any', token)).status).toBe(200);
    expect(timesAsked(digest)).toBe(2);
  });

  it('rejects a token auth-server has revoked', async () => {
    const { token, digest } = issueToken();
    expect((await get(redisDown, '/probe/any', token)).status).toBe(200);
    revokeAtAuthServer(digest);
    const response = await get(redisDown, '/probe/any', token);
    expect(response.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    await expectProblem(response, 401, 'invalid_token');
  });

  it('refuses to confirm a tombstone, so auth-server rolls the revocation back', async () => {
    await expect(
      redisDown.cache.tombstone('sandbox-partner', [sha256Hex('at_whatever')]),
    ).rejects.toBeInstanceOf(IntrospectionCacheUnavailableError);
  });
});

describe('with auth-server not answering', () => {
  // Last in the file on purpose: auth-server stays down for the rest of the run.
  let app: ResourceApp | undefined;
  let cached: string;

  beforeAll(async () => {
    app = await redisReady(await startResourceApp(services.redisUrl));
    const issued = issueToken();
    cached = issued.token;
    // Asked once while auth-server answers: cached, stamped with the partner's generation.
    await eventually(async () => ((await get(app!, '/probe/any', cached)).status === 200 ? true : undefined));
    await responder?.close();
    responder = undefined;
  });

  afterAll(async () => {
    await app?.app.close();
  });

  async function expectUnavailableInTime(on: ResourceApp) {
    const { token } = issueToken();
    const started = Date.now();
    const response = await get(on, '/probe/any', token);
    await expectProblem(response, 503, 'service_unavailable');
    expect(Date.now() - started).toBeLessThan(RPC_TIMEOUT_MS + 1500);
  }

  it('answers an uncached token with 503 service_unavailable within the RPC timeout (Redis up)', async () => {
    await expectUnavailableInTime(app!);
  });

  it('still serves a token it has cached: a hit needs no RPC', async () => {
    expect((await get(app!, '/probe/any', cached)).status).toBe(200);
  });

  it('answers an uncached token with 503 service_unavailable within the RPC timeout (Redis unreachable)', async () => {
    await app?.app.close();
    app = await startResourceApp(await unreachableRedisUrl());
    await expectUnavailableInTime(app);
  });
});

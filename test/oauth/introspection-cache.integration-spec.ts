import { Controller, Get, Module } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  AUTH_CONSENTS_REVOKE,
  AUTH_INTROSPECT,
  introspectionCacheKey,
  partnerTombstoneKey,
} from '@svc/contracts';
import { PlatformModule, RedisModule, RpcModule, sha256Hex } from '@svc/platform';
import { BearerAuth, Principal, SecurityModule } from '@svc/security';
import { member, partner, unknownToken } from '../support/factories';
import { startHttpApp } from '../support/http-app';
import { sample, scrape } from '../support/metrics';
import { request, type HttpResponse } from '../support/http';
import { startAuthServer, type AuthServerHarness } from '../support/starters/auth-server';
import { issueCode, issueTokens, expectTokenResponse, OAuthHttp } from '../support/oauth/flow';
import { appBrokerUrl } from '../../scripts/lib/credentials.cjs';

/**
 * A revoked token fails on the very next request even though a resource app had its live answer
 * cached in Redis (issue 3; libs/contracts/src/introspection.ts): a tiny resource app guarded by
 * libs/security's BearerAuthGuard, and auth-server, each in-process, sharing this run's Redis.
 */
jest.setTimeout(30_000);

@Controller('probe')
class ProbeController {
  @Get('any')
  @BearerAuth()
  any(@Principal() principal: Principal) {
    return { user_id: principal.user_id, client_id: principal.client_id, scopes: principal.scopes };
  }

  @Get('profile')
  @BearerAuth('profile:read')
  profile(@Principal() principal: Principal) {
    return { user_id: principal.user_id };
  }
}

@Module({ controllers: [ProbeController] })
class ProbeModule {}

let auth: AuthServerHarness;
let http: OAuthHttp;
let resource: { app: NestFastifyApplication; url: string };
const A = partner('sandbox-partner');
const alex = member('alex.morgan@sandbox.test');

beforeAll(async () => {
  auth = await startAuthServer();
  http = new OAuthHttp(auth.url);
  resource = await startHttpApp(
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
      REDIS_URL: auth.services.redisUrl,
      REDIS_KEY_PREFIX: auth.services.redisKeyPrefix,
      AMQP_URL: appBrokerUrl('crew-api', auth.services.amqpUrl),
      AMQP_PREFETCH: 20,
      RPC_TIMEOUT_MS: 10_000,
    },
  );
}, 60_000);

afterAll(async () => {
  await resource?.app.close();
  await auth?.close();
});

const call = (accessToken: string, path = '/probe/any'): Promise<HttpResponse> =>
  request(`${resource.url}${path}`, { headers: { authorization: `Bearer ${accessToken}` } });

async function cached(accessToken: string): Promise<unknown> {
  const raw = await auth.redis.get(introspectionCacheKey(sha256Hex(accessToken)));
  return raw === null ? null : JSON.parse(raw);
}

/** A live token, called once so that its answer sits in the cache. */
async function cachedLiveToken(scope?: string) {
  const issued = await issueTokens(auth.rpc, http, { scope });
  const first = await call(issued.tokens.access_token);
  expect(first.status).toBe(200);
  expect(first.json()).toEqual({
    user_id: alex.user_id,
    client_id: A.client_id,
    scopes: expect.arrayContaining(issued.tokens.scope.split(' ')) as unknown,
  });
  expect(await cached(issued.tokens.access_token)).toMatchObject({ active: true, user_id: alex.user_id });
  return issued;
}

function expectRejected(res: HttpResponse) {
  expect(res.status).toBe(401);
  expect(res.header('www-authenticate')).toMatch(/^Bearer\b.*error="invalid_token"/);
}

describe('auth.introspect (RPC)', () => {
  it('answers a live token with its member, partner, scopes and expiry; an unknown one inactive', async () => {
    const { tokens } = await issueTokens(auth.rpc, http, { scope: 'profile:read vessels:read' });
    const answer = await auth.rpc.call(AUTH_INTROSPECT, { token_digest: sha256Hex(tokens.access_token) });
    expect(answer).toEqual({
      active: true,
      user_id: alex.user_id,
      client_id: A.client_id,
      scopes: expect.arrayContaining(['profile:read', 'vessels:read']) as unknown,
      expires_at: expect.stringMatching(/Z$/) as unknown,
    });
    if (!answer.active) return;
    const lifetime = (Date.parse(answer.expires_at) - Date.now()) / 1000;
    expect(lifetime).toBeGreaterThan(3500);
    expect(lifetime).toBeLessThanOrEqual(3601);
    await expect(
      auth.rpc.call(AUTH_INTROSPECT, { token_digest: sha256Hex(unknownToken()) }),
    ).resolves.toEqual({
      active: false,
    });
  });

  it('never calls a refresh token an active access token', async () => {
    const { tokens } = await issueTokens(auth.rpc, http);
    await expect(
      auth.rpc.call(AUTH_INTROSPECT, { token_digest: sha256Hex(tokens.refresh_token) }),
    ).resolves.toEqual({
      active: false,
    });
    expect((await call(tokens.refresh_token)).status).toBe(401);
  });
});

describe('BearerAuthGuard with a cached answer', () => {
  it('answers a missing token 401 with a bare Bearer challenge (RFC 6750 §3.1)', async () => {
    const res = await request(`${resource.url}/probe/any`);
    expect(res.status).toBe(401);
    expect(res.header('www-authenticate')).toMatch(/^Bearer\b/);
    expect(res.header('www-authenticate')).not.toMatch(/error=/);
  });

  it('answers a token without the needed scope 403 insufficient_scope (RFC 6750 §3.1)', async () => {
    const { tokens } = await issueTokens(auth.rpc, http, { scope: 'seatime:read' });
    const res = await call(tokens.access_token, '/probe/profile');
    expect(res.status).toBe(403);
    expect(res.header('www-authenticate')).toMatch(/error="insufficient_scope"/);
    expect(res.header('www-authenticate')).toMatch(/scope="profile:read"/);
  });

  it('POST /oauth/revoke of the access token → 401 on the very next request', async () => {
    const { tokens } = await cachedLiveToken();
    expect((await http.revokeToken(A, tokens.access_token)).status).toBe(200);
    expectRejected(await call(tokens.access_token));
    // The tombstone is in the state Redis; the cached answer may stay, the tombstone wins over it.
    expect(await auth.redis.exists(partnerTombstoneKey(A.client_id, sha256Hex(tokens.access_token)))).toBe(1);
  });

  it('POST /oauth/revoke of the refresh token → its access token 401 on the very next request', async () => {
    const { tokens } = await cachedLiveToken();
    expect((await http.revokeToken(A, tokens.refresh_token)).status).toBe(200);
    expectRejected(await call(tokens.access_token));
  });

  it('a refresh (rotation) → the old access token 401 on the very next request', async () => {
    const { tokens } = await cachedLiveToken();
    const next = expectTokenResponse(await http.refresh(A, tokens.refresh_token));
    expectRejected(await call(tokens.access_token));
    expect((await call(next.access_token)).status).toBe(200);
  });

  it('a disconnect → 401 on the very next request', async () => {
    const { tokens } = await cachedLiveToken();
    await expect(
      auth.rpc.call(AUTH_CONSENTS_REVOKE, { user_id: alex.user_id, client_id: A.client_id }),
    ).resolves.toEqual({ revoked: true });
    expectRejected(await call(tokens.access_token));
  });

  it('a code replay → the tokens of that code 401 on the very next request', async () => {
    const issued = await issueCode(auth.rpc);
    const tokens = expectTokenResponse(
      await http.exchange(A, issued.code, issued.verifier, issued.redirectUri),
    );
    expect((await call(tokens.access_token)).status).toBe(200);
    expect((await http.exchange(A, issued.code, issued.verifier, issued.redirectUri)).status).toBe(400);
    expectRejected(await call(tokens.access_token));
  });

  it('many cached reads then a revoke: no request after the revoke passes', async () => {
    const { tokens } = await cachedLiveToken();
    const before = await Promise.all(Array.from({ length: 10 }, () => call(tokens.access_token)));
    expect(before.every((r) => r.status === 200)).toBe(true);
    expect((await http.revokeToken(A, tokens.access_token)).status).toBe(200);
    const after = await Promise.all(Array.from({ length: 10 }, () => call(tokens.access_token)));
    expect(after.map((r) => r.status)).toEqual(Array(10).fill(401));
  });

  it('/oauth/userinfo also refuses a revoked token that it had answered a moment before', async () => {
    const { tokens } = await issueTokens(auth.rpc, http);
    expect((await http.userinfo(tokens.access_token)).status).toBe(200);
    expect((await http.revokeToken(A, tokens.access_token)).status).toBe(200);
    expect((await http.userinfo(tokens.access_token)).status).toBe(401);
  });
});

describe('token_cache_lookups_total on the metrics port', () => {
  const count = async (result: 'hit' | 'miss') =>
    sample(await scrape(resource.app), 'token_cache_lookups_total', { app: 'crew-api', result });

  it('counts a token’s first lookup as a miss (auth-server asked) and the next as a hit', async () => {
    const before = { hit: await count('hit'), miss: await count('miss') };
    // Both series exist before any lookup happened in this test.
    expect(before).toEqual({ hit: expect.any(Number), miss: expect.any(Number) });
    const { tokens } = await issueTokens(auth.rpc, http);
    expect((await call(tokens.access_token)).status).toBe(200);
    expect(await count('miss')).toBe(before.miss! + 1);
    expect(await count('hit')).toBe(before.hit);
    expect((await call(tokens.access_token)).status).toBe(200);
    expect((await call(tokens.access_token)).status).toBe(200);
    expect(await count('hit')).toBe(before.hit! + 2);
    expect(await count('miss')).toBe(before.miss! + 1);
  });
});

import { randomBytes } from 'node:crypto';
import { basicAuthorization } from '../support/factories';
import { request, type HttpResponse } from '../support/http';
import { startSystem, type RunningSystem } from '../support/system';
import { A, authorize, BASIC_A, type TokenPair } from '../support/e2e-client';

/**
 * The failed-authentication limit per client address, through the gateway as partners reach it:
 * bad bearer tokens (crew-api `/v1/me`, auth-server `/oauth/userinfo`), bad Basic credentials
 * (sponsorship-api `/v1/partners/*`) and bad client secrets (`/oauth/token`, `/oauth/revoke`).
 * Limits of 3 make the refusals exact; one replica per app, since each replica learns of an
 * exhausted window at its own first failure. The gateway trusts 127.0.0.1 as its load balancer,
 * so the last X-Forwarded-For entry the test sends is the client; entries a client puts before it
 * change nothing.
 */
jest.setTimeout(180_000);

const LIMIT = 3;
let system: RunningSystem;
let token: TokenPair;

beforeAll(async () => {
  system = await startSystem({
    label: 'failed-auth',
    replicas: 1,
    env: {
      AUTH_FAILURES_PER_ADDRESS: String(LIMIT),
      CLIENT_AUTH_FAILURES_PER_ADDRESS: String(LIMIT),
      AUTH_FAILURE_WINDOW: '10m',
      GATEWAY_TRUSTED_PROXIES: '127.0.0.1',
    },
  });
  token = await authorize(system, 'alex.morgan@sandbox.test');
}, 180_000);

afterAll(async () => {
  await system?.stop();
});

/** A fresh client address per test (TEST-NET-2), so no test inherits another's failures. */
function freshAddress(): string {
  const b = randomBytes(2);
  return `198.51.${b[0]}.${b[1]}`;
}

/** `address` as the load balancer appends it, after whatever the client itself claimed. */
function from(address: string): Record<string, string> {
  const spoofed = `203.0.113.${randomBytes(1)[0]}`;
  return { 'x-forwarded-for': `${spoofed}, ${address}` };
}

function get(path: string, authorization: string, address: string): Promise<HttpResponse> {
  return request(`${system.baseUrl}${path}`, { headers: { authorization, ...from(address) } });
}

function postForm(path: string, fields: Record<string, string>, address: string, authorization?: string) {
  return request(`${system.baseUrl}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(authorization ? { authorization } : {}),
      ...from(address),
    },
    body: new URLSearchParams(fields).toString(),
  });
}

function expectRetryAfter(res: HttpResponse): void {
  const seconds = Number(res.header('retry-after'));
  expect(seconds).toBeGreaterThan(0);
  expect(seconds).toBeLessThanOrEqual(600);
}

describe('failed authentications per client address', () => {
  it('refuses an address after too many bad bearer tokens on /v1/*, with a 429 Problem, even with a good token', async () => {
    const address = freshAddress();
    for (let i = 0; i < LIMIT; i++) {
      expect((await get('/v1/me', `Bearer at_bogus${i}`, address)).status).toBe(401);
    }
    const refused = await get('/v1/me', `Bearer ${token.access_token}`, address);
    expect(refused.status).toBe(429);
    expect(refused.header('content-type')).toContain('application/problem+json');
    expect(refused.json()).toMatchObject({
      status: 429,
      type: expect.stringMatching(/rate_limit_exceeded$/),
    });
    expectRetryAfter(refused);
    // The partner's own per-client limit was not touched: the request never got that far.
    expect(refused.header('x-ratelimit-limit')).toBeUndefined();

    // Another address is not held back, with a good token or a bad one.
    expect((await get('/v1/me', `Bearer ${token.access_token}`, freshAddress())).status).toBe(200);
    expect((await get('/v1/me', 'Bearer at_bogus', freshAddress())).status).toBe(401);
  });

  it('counts successes not at all: good tokens from an address never bring it closer to the limit', async () => {
    const address = freshAddress();
    for (let i = 0; i < LIMIT * 3; i++) {
      expect((await get('/v1/me', `Bearer ${token.access_token}`, address)).status).toBe(200);
    }
    for (let i = 0; i < LIMIT; i++)
      expect((await get('/v1/me', 'Bearer at_bogus', address)).status).toBe(401);
    expect((await get('/v1/me', 'Bearer at_bogus', address)).status).toBe(429);
  });

  it('answers /oauth/userinfo over the limit in the RFC 6749 shape', async () => {
    const address = freshAddress();
    for (let i = 0; i < LIMIT; i++) {
      expect((await get('/oauth/userinfo', 'Bearer at_bogus', address)).status).toBe(401);
    }
    const refused = await get('/oauth/userinfo', `Bearer ${token.access_token}`, address);
    expect(refused.status).toBe(429);
    expect(refused.json()).toEqual({
      error: 'temporarily_unavailable',
      error_description: expect.any(String),
    });
    expectRetryAfter(refused);
  });

  it('refuses an address after too many bad Basic credentials on /v1/partners/*', async () => {
    const address = freshAddress();
    const wrong = basicAuthorization(A.client_id, 'sk_wrong_secret');
    for (let i = 0; i < LIMIT; i++) {
      expect((await get('/v1/partners/sponsorships', wrong, address)).status).toBe(401);
    }
    const refused = await get('/v1/partners/sponsorships', BASIC_A, address);
    expect(refused.status).toBe(429);
    expect(refused.json()).toMatchObject({ type: expect.stringMatching(/rate_limit_exceeded$/) });
    expectRetryAfter(refused);
    expect((await get('/v1/partners/sponsorships', BASIC_A, freshAddress())).status).toBe(200);
  });

  it('refuses an address after too many failed client authentications at /oauth/token, also at /oauth/revoke', async () => {
    const address = freshAddress();
    for (let i = 0; i < LIMIT; i++) {
      const res = await postForm(
        '/oauth/token',
        {
          grant_type: 'refresh_token',
          refresh_token: 'rt_x',
          client_id: A.client_id,
          client_secret: 'wrong',
        },
        address,
      );
      expect(res.status).toBe(401);
      expect(res.json()).toMatchObject({ error: 'invalid_client' });
    }
    // One counter for both endpoints; the right secret is not looked at either.
    for (const path of ['/oauth/revoke', '/oauth/token']) {
      const refused = await postForm(
        path,
        { token: 'at_x', grant_type: 'refresh_token', refresh_token: 'rt_x' },
        address,
        BASIC_A,
      );
      expect(refused.status).toBe(429);
      expect(refused.json()).toEqual({
        error: 'temporarily_unavailable',
        error_description: expect.any(String),
      });
      expectRetryAfter(refused);
    }
    expect((await postForm('/oauth/revoke', { token: 'at_unknown' }, freshAddress(), BASIC_A)).status).toBe(
      200,
    );
  });
});

import http from 'node:http';
import type net from 'node:net';
import { DEFAULT_BODY_LIMIT_BYTES } from '@svc/contracts';
import { API_CSP } from '../../apps/gateway/src/nginx-config';
import { startGateway, type Gateway } from '../support/nginx';

/**
 * The abuse limits (limit_req) under real nginx, with one echo server as every app: POST /login,
 * /oauth/token and /oauth/revoke are refused per client address beyond rate + burst, in the shape
 * of the path, before any request reaches an app. Rates of 1r/m make the bursts exact.
 */
jest.setTimeout(30_000);

let upstream: http.Server;
let upstreamHits = 0;
let gateway: Gateway;

beforeAll(async () => {
  upstream = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      upstreamHits += 1;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const address = `127.0.0.1:${(upstream.address() as net.AddressInfo).port}`;

  gateway = await startGateway({
    APP_ENV: 'sandbox',
    PUBLIC_BASE_URL: 'https://api.example.test',
    GATEWAY_WORKER_PROCESSES: '1',
    AUTH_SERVER_UPSTREAMS: address,
    CONSENT_UI_UPSTREAMS: address,
    CREW_API_UPSTREAMS: address,
    SPONSORSHIP_API_UPSTREAMS: address,
    // The test is the load balancer: X-Forwarded-For names the client.
    GATEWAY_TRUSTED_PROXIES: '127.0.0.1',
    GATEWAY_LOGIN_RATE: '1r/m',
    GATEWAY_LOGIN_BURST: '2',
    GATEWAY_OAUTH_RATE: '1r/m',
    GATEWAY_OAUTH_BURST: '3',
  });
});

afterAll(async () => {
  await gateway?.stop();
  upstream?.closeAllConnections();
  await new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve()));
});

function send(path: string, client: string, method = 'POST') {
  return fetch(`${gateway.base}${path}`, {
    method,
    headers: {
      'X-Forwarded-For': client,
      ...(method === 'POST' ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
    },
    body: method === 'POST' ? 'a=b' : undefined,
  });
}

describe('gateway abuse limits (limit_req)', () => {
  it('refuses POST /login beyond rate + burst from one address with a 429 page and Retry-After', async () => {
    const client = '203.0.113.1';
    const hitsBefore = upstreamHits;
    const statuses = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await send('/login', client)).status);
    expect(statuses).toEqual([200, 200, 200]);
    const refused = await send('/login', client);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(refused.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(refused.headers.get('cache-control')).toBe('no-store');
    expect(refused.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
    // Its own add_header lines do not drop the gateway's security headers.
    expect(refused.headers.get('content-security-policy')).toBe(API_CSP);
    expect(refused.headers.get('x-content-type-options')).toBe('nosniff');
    expect(refused.headers.get('referrer-policy')).toBe('no-referrer');
    expect(await refused.text()).toContain('Too many sign-in attempts');
    expect(upstreamHits - hitsBefore).toBe(3);

    // Showing the form is never limited; another address is not held back.
    for (let i = 0; i < 5; i += 1) expect((await send('/login', client, 'GET')).status).toBe(200);
    expect((await send('/login', '203.0.113.2')).status).toBe(200);
  });

  it('refuses /oauth/token and /oauth/revoke beyond rate + burst with an RFC 6749 error and Retry-After', async () => {
    const client = '203.0.113.3';
    const statuses = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await send('/oauth/token', client)).status);
    expect(statuses).toEqual([200, 200, 200, 200]);
    // One zone for both endpoints: revoke is refused too.
    for (const path of ['/oauth/token', '/oauth/revoke']) {
      const refused = await send(path, client);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('60');
      expect(refused.headers.get('content-type')).toBe('application/json');
      expect(refused.headers.get('cache-control')).toBe('no-store');
      expect(refused.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
      expect(refused.headers.get('content-security-policy')).toBe(API_CSP);
      expect(refused.headers.get('x-content-type-options')).toBe('nosniff');
      expect(await refused.json()).toEqual({
        error: 'temporarily_unavailable',
        error_description: expect.any(String),
      });
    }
    expect((await send('/oauth/token', '203.0.113.4')).status).toBe(200);
  });

  it('limits IPv6 clients by their /64 (CLIENT_IPV6_PREFIX): two addresses of one /64 share a limit', async () => {
    // Burst 3 at 1r/m: four requests in all from the network, whichever of its addresses sends them.
    const network = ['2001:db8:38:64::1', '2001:db8:38:64::2', '2001:db8:38:64:ffff:ffff:ffff:fffe'];
    const statuses = [];
    for (const client of [...network, network[0]]) statuses.push((await send('/oauth/token', client)).status);
    expect(statuses).toEqual([200, 200, 200, 200]);
    expect((await send('/oauth/token', '2001:db8:38:64::beef')).status).toBe(429);
    expect((await send('/oauth/token', '2001:DB8:38:64:0:0:0:99')).status).toBe(429);
    // The next /64, and an IPv4-mapped address of its own, are not affected.
    expect((await send('/oauth/token', '2001:db8:38:65::1')).status).toBe(200);
    expect((await send('/oauth/token', '::ffff:203.0.113.40')).status).toBe(200);
    // An IPv4-mapped address shares the limit of the IPv4 address it maps.
    for (let i = 0; i < 3; i += 1) expect((await send('/oauth/token', '203.0.113.40')).status).toBe(200);
    expect((await send('/oauth/token', '::ffff:203.0.113.40')).status).toBe(429);
  });

  it('leaves other paths alone (the apps meter /v1/* themselves)', async () => {
    const client = '203.0.113.5';
    for (let i = 0; i < 10; i += 1) {
      expect((await send('/v1/me', client, 'GET')).status).toBe(200);
      expect((await send('/oauth/userinfo', client, 'GET')).status).toBe(200);
    }
  });

  it('keeps the gateway’s own error pages in a limited location (an oversized body is a 413 Problem)', async () => {
    const res = await fetch(`${gateway.base}/login`, {
      method: 'POST',
      headers: { 'X-Forwarded-For': '203.0.113.6', 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'a='.padEnd(DEFAULT_BODY_LIMIT_BYTES + 1024, 'x'),
    });
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(((await res.json()) as { status: number }).status).toBe(413);
  });
});

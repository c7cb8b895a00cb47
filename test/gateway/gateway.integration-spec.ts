import http from 'node:http';
import type net from 'node:net';
import {
  DEFAULT_BODY_LIMIT_BYTES,
  PROBLEMS,
  RECONCILE_BODY_LIMIT_BYTES,
  type ProblemCode,
} from '@svc/contracts';
import { parse as parseYaml } from 'yaml';
import { freePort } from '../../scripts/lib/net.cjs';
import { startGateway, type Gateway } from '../support/nginx';

/**
 * The generated configuration under real nginx, with small Node servers as the apps: what a
 * partner sees through the gateway (routing, request ids, Problem JSON, body limits, pools).
 */
jest.setTimeout(30_000);

const DOCS_URL = 'https://docs.example.test/crew';
const MiB = 1024 * 1024;
const GENERATED_ID = /^req_[0-9a-f]{32}$/;
/** The slow app answers after this; the gateway's read timeout (1s) must end the wait long before. */
const SLOW_UPSTREAM_DELAY_MS = 10_000;

interface Received {
  readonly server: string;
  readonly method: string;
  readonly url: string;
  readonly requestId: string | undefined;
  readonly headers: http.IncomingHttpHeaders;
  readonly bodyBytes: number;
}

/** An app's own Problem body, which the gateway must pass through byte for byte. */
function upstreamProblemBody(requestId: string | undefined): string {
  return JSON.stringify({
    type: `${DOCS_URL}/errors/service_unavailable`,
    title: 'Service unavailable',
    status: 503,
    detail: 'The crew records are being migrated.',
    instance: requestId,
  });
}

/** Answers with what it received; a few paths play an app's own error or a 304. */
class EchoUpstream {
  readonly received: Received[] = [];
  /** TCP connections accepted so far (keep-alive reuse keeps this low). */
  connections = 0;
  address = '';
  private readonly server = http.createServer((req, res) => this.handle(req, res));

  constructor(readonly name: string) {
    this.server.keepAliveTimeout = 120_000; // longer than the gateway's upstream keepalive_timeout
    this.server.on('connection', () => this.connections++);
  }

  async start(): Promise<this> {
    this.address = await listen(this.server);
    return this;
  }

  close(): Promise<void> {
    return closeServer(this.server);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    let bodyBytes = 0;
    req.on('data', (chunk: Buffer) => (bodyBytes += chunk.length));
    req.on('end', () => {
      const requestId = req.headers['x-request-id'] as string | undefined;
      const url = req.url ?? '';
      const entry: Received = {
        server: this.name,
        method: req.method ?? '',
        url,
        requestId,
        headers: req.headers,
        bodyBytes,
      };
      this.received.push(entry);
      // The gateway must hide this one and send its own, exactly once.
      res.setHeader('X-Request-Id', `from-upstream-${this.name}`);
      if (url === '/v1/partners/unavailable') {
        res.writeHead(503, { 'Content-Type': 'application/problem+json' });
        res.end(upstreamProblemBody(requestId));
      } else if (url === '/v1/me/app-404') {
        res.writeHead(404, { 'Content-Type': 'application/json' });
        res.end('{"app":"not here"}');
      } else if (url === '/v1/me/own-headers') {
        // Like consent-ui's pages: a policy of its own, which the gateway must not add to.
        res.writeHead(200, {
          'Content-Type': 'text/html',
          'Content-Security-Policy': "default-src 'none'; style-src 'self'",
          'X-Content-Type-Options': 'nosniff',
          'Referrer-Policy': 'same-origin',
        });
        res.end('<p>page</p>');
      } else if (url === '/v1/me/cached') {
        res.writeHead(304, { ETag: '"v1"' });
        res.end();
      } else {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(entry));
      }
    });
  }
}

/** Accepts requests and answers long after the gateway's read timeout. */
class SlowUpstream {
  hits = 0;
  address = '';
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly server = http.createServer((_req, res) => {
    this.hits++;
    this.timers.add(setTimeout(() => res.end('too late'), SLOW_UPSTREAM_DELAY_MS));
  });

  async start(): Promise<this> {
    this.address = await listen(this.server);
    return this;
  }

  close(): Promise<void> {
    this.timers.forEach(clearTimeout);
    return closeServer(this.server);
  }
}

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
}

async function closeServer(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** A request whose path goes out byte for byte (fetch would normalise dot segments). */
function rawGet(
  base: string,
  path: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, path, method: 'GET', agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function expectProblem(res: Response, code: ProblemCode): Promise<void> {
  const requestId = res.headers.get('x-request-id');
  expect(res.status).toBe(PROBLEMS[code].status);
  expect(res.headers.get('content-type')).toBe('application/problem+json');
  expect(await res.json()).toEqual({
    type: `${DOCS_URL}/errors/${code}`,
    title: PROBLEMS[code].title,
    status: PROBLEMS[code].status,
    detail: expect.any(String),
    instance: requestId,
  });
  expect(requestId).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
}

const payload = (bytes: number) => Buffer.alloc(bytes, 0x61);

let crewA: EchoUpstream;
let crewB: EchoUpstream;
let slow: SlowUpstream;
let refusedPort: number;
let sandbox: Gateway;
let production: Gateway;

beforeAll(async () => {
  [crewA, crewB, slow, refusedPort] = await Promise.all([
    new EchoUpstream('a').start(),
    new EchoUpstream('b').start(),
    new SlowUpstream().start(),
    freePort(),
  ]);
  const env = {
    PUBLIC_BASE_URL: 'https://api.example.test',
    DOCS_URL,
    CREW_API_UPSTREAMS: `${crewA.address},${crewB.address}`,
    SPONSORSHIP_API_UPSTREAMS: crewA.address,
    AUTH_SERVER_UPSTREAMS: `127.0.0.1:${refusedPort}`,
    CONSENT_UI_UPSTREAMS: slow.address,
    GATEWAY_UPSTREAM_CONNECT_TIMEOUT: '1s',
    GATEWAY_UPSTREAM_READ_TIMEOUT: '1s',
    // One worker: round robin and keep-alive pools are per worker, so counts are deterministic.
    GATEWAY_WORKER_PROCESSES: '1',
  };
  [sandbox, production] = await Promise.all([
    startGateway({ ...env, APP_ENV: 'sandbox' }),
    startGateway({ ...env, APP_ENV: 'production' }),
  ]);
});

afterAll(async () => {
  await Promise.all([sandbox?.stop(), production?.stop()]);
  await Promise.all([crewA?.close(), crewB?.close(), slow?.close()]);
});

const receivedBy = (...upstreams: EchoUpstream[]) => upstreams.flatMap((u) => u.received);

describe('gateway (nginx) in front of fake apps', () => {
  it('answers /healthz itself with {"status":"ok"} and a fresh req_ id', async () => {
    const before = receivedBy(crewA, crewB).length;
    const res = await fetch(`${sandbox.base}/healthz`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('x-request-id')).toMatch(GENERATED_ID);
    expect(await res.json()).toEqual({ status: 'ok' });
    expect(receivedBy(crewA, crewB)).toHaveLength(before);
  });

  it('answers /healthz with a 405 Problem for methods other than GET and HEAD', async () => {
    const res = await fetch(`${sandbox.base}/healthz`, { method: 'POST' });
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    await expectProblem(res, 'method_not_allowed');
    expect((await fetch(`${sandbox.base}/healthz`, { method: 'HEAD' })).status).toBe(200);
  });

  it.each(['partner-42.abc_DEF:7', 'x'.repeat(128)])(
    'keeps a valid X-Request-Id (%s), passes it upstream and returns it exactly once',
    async (id) => {
      const res = await fetch(`${sandbox.base}/v1/me/sea-time`, { headers: { 'X-Request-Id': id } });
      expect(res.status).toBe(200);
      const seen = (await res.json()) as Received;
      expect(seen.url).toBe('/v1/me/sea-time');
      expect(seen.requestId).toBe(id);
      // Headers.get joins repeated headers with ", ": equality means one header, the gateway's.
      expect(res.headers.get('x-request-id')).toBe(id);
    },
  );

  it.each([
    ['200 characters', 'a'.repeat(200)],
    ['129 characters', 'a'.repeat(129)],
    ['a space', 'has space'],
    ['a slash', 'a/b'],
  ])(
    'replaces an X-Request-Id with %s by a fresh req_<hex>, the same upstream and back',
    async (_what, id) => {
      const res = await fetch(`${sandbox.base}/v1/me`, { headers: { 'X-Request-Id': id } });
      expect(res.status).toBe(200);
      const returned = res.headers.get('x-request-id');
      expect(returned).toMatch(GENERATED_ID);
      expect(((await res.json()) as Received).requestId).toBe(returned);
    },
  );

  it('gives every request its own id', async () => {
    const ids = await Promise.all(
      [1, 2, 3].map(async () => (await fetch(`${sandbox.base}/v1/me`)).headers.get('x-request-id')),
    );
    expect(new Set(ids).size).toBe(3);
  });

  it('passes Host and X-Forwarded-For/Proto/Host upstream, over a keep-alive connection', async () => {
    const res = await fetch(`${sandbox.base}/v1/me`);
    const seen = (await res.json()) as Received;
    expect(seen.headers.host).toBe(`127.0.0.1:${sandbox.port}`);
    expect(seen.headers['x-forwarded-host']).toBe(`127.0.0.1:${sandbox.port}`);
    expect(seen.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(seen.headers['x-forwarded-proto']).toBe('http');
    expect(seen.headers.connection).toBeUndefined(); // not "close": the connection goes back to the pool

    const behindTls = await fetch(`${sandbox.base}/v1/me`, { headers: { 'X-Forwarded-Proto': 'https' } });
    expect(((await behindTls.json()) as Received).headers['x-forwarded-proto']).toBe('https');
  });

  it('reuses pooled upstream connections', async () => {
    const before = crewA.connections;
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${sandbox.base}/v1/partners/sponsorships`);
      expect(res.status).toBe(200);
    }
    expect(crewA.connections - before).toBeLessThanOrEqual(1);
  });

  it('spreads requests over every server of CREW_API_UPSTREAMS (round robin)', async () => {
    const servers: string[] = [];
    for (let i = 0; i < 10; i++) {
      servers.push(((await (await fetch(`${sandbox.base}/v1/me`)).json()) as Received).server);
    }
    expect(servers.filter((s) => s === 'a').length).toBeGreaterThanOrEqual(3);
    expect(servers.filter((s) => s === 'b').length).toBeGreaterThanOrEqual(3);
  });

  it('answers an unknown path with a 404 Problem whose instance is the request id', async () => {
    const res = await fetch(`${sandbox.base}/no/such/path`, { headers: { 'X-Request-Id': 'trace-404' } });
    expect(res.headers.get('x-request-id')).toBe('trace-404');
    await expectProblem(res, 'not_found');

    // The apps' probes stay on their own ports, and their metrics on a port the gateway never proxies.
    for (const path of ['/v1/mex', '/oauth/token/more', '/', '/_gateway/errors/502', '/metrics', '/readyz']) {
      await expectProblem(await fetch(`${sandbox.base}${path}`), 'not_found');
    }
  });

  it('answers 502 bad_gateway when the app refuses the connection', async () => {
    const started = Date.now();
    const res = await fetch(`${sandbox.base}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    await expectProblem(res, 'bad_gateway');
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('answers 504 gateway_timeout when the app is slower than the read timeout, without waiting for it', async () => {
    const hits = slow.hits;
    const started = Date.now();
    const res = await fetch(`${sandbox.base}/login`);
    await expectProblem(res, 'gateway_timeout');
    expect(Date.now() - started).toBeLessThan(SLOW_UPSTREAM_DELAY_MS / 2);
    expect(slow.hits).toBe(hits + 1); // the app was asked once, not retried
  });

  it('passes the apps’ own error responses through untouched', async () => {
    const res = await fetch(`${sandbox.base}/v1/partners/unavailable`);
    const requestId = res.headers.get('x-request-id');
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(requestId).toMatch(GENERATED_ID);
    expect(await res.text()).toBe(upstreamProblemBody(requestId ?? 'missing'));

    const notFound = await fetch(`${sandbox.base}/v1/me/app-404`);
    expect(notFound.status).toBe(404);
    expect(await notFound.text()).toBe('{"app":"not here"}');
    expect(notFound.headers.get('x-request-id')).toMatch(GENERATED_ID);
  });

  it('returns the request id on a 304 from an app', async () => {
    const res = await fetch(`${sandbox.base}/v1/me/cached`, {
      headers: { 'If-None-Match': '"v1"', 'X-Request-Id': 'cond-1' },
    });
    expect(res.status).toBe(304);
    expect(res.headers.get('x-request-id')).toBe('cond-1');
  });

  describe('security headers', () => {
    const API_CSP = "default-src 'none'; frame-ancestors 'none'";
    const expectApiHeaders = (res: Response, where: string) => {
      expect({ where, csp: res.headers.get('content-security-policy') }).toEqual({ where, csp: API_CSP });
      expect({ where, nosniff: res.headers.get('x-content-type-options') }).toEqual({
        where,
        nosniff: 'nosniff',
      });
      expect({ where, referrer: res.headers.get('referrer-policy') }).toEqual({
        where,
        referrer: 'no-referrer',
      });
    };

    it('puts the API policy, nosniff and no-referrer on proxied answers, Problems and 304s', async () => {
      expectApiHeaders(await fetch(`${sandbox.base}/v1/me`), 'app 200');
      expectApiHeaders(await fetch(`${sandbox.base}/v1/partners/unavailable`), 'app Problem 503');
      expectApiHeaders(
        await fetch(`${sandbox.base}/v1/me/cached`, { headers: { 'If-None-Match': '"v1"' } }),
        'app 304',
      );
      expectApiHeaders(await fetch(`${sandbox.base}/nowhere`), 'gateway 404 Problem');
      expectApiHeaders(await fetch(`${sandbox.base}/openapi.json`, { method: 'POST' }), 'gateway 405');
      expectApiHeaders(await fetch(`${sandbox.base}/openapi.json`), 'description');
      const etag = (await fetch(`${sandbox.base}/openapi.json`)).headers.get('etag') ?? '';
      const notModified = await fetch(`${sandbox.base}/openapi.json`, { headers: { 'If-None-Match': etag } });
      expect(notModified.status).toBe(304);
      expectApiHeaders(notModified, 'description 304');
    });

    it('keeps an app’s own policy and headers, without adding its own next to them', async () => {
      const res = await fetch(`${sandbox.base}/v1/me/own-headers`);
      expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; style-src 'self'");
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('referrer-policy')).toBe('same-origin');
    });

    it('gives the docs a script-free policy and the Redoc reference its own', async () => {
      const guide = await fetch(`${sandbox.base}/docs/`);
      expect(guide.headers.get('content-security-policy')).toMatch(/^default-src 'none'; style-src 'self';/);
      expect(guide.headers.get('content-security-policy')).not.toContain('script-src');
      expect(guide.headers.get('x-content-type-options')).toBe('nosniff');
      const reference = await fetch(`${sandbox.base}/docs/reference`);
      expect(reference.status).toBe(200);
      expect(await reference.text()).toContain('redoc.standalone.js');
      expect(reference.headers.get('content-security-policy')).toContain("script-src 'self';");
      expect(reference.headers.get('x-request-id')).toMatch(GENERATED_ID);
      expectApiHeaders(await fetch(`${sandbox.base}/docs/missing`), 'docs 404 Problem');
    });

    it('sends HSTS from the production gateway only, on every answer', async () => {
      const hsts = 'max-age=31536000; includeSubDomains';
      expect((await fetch(`${production.base}/v1/me`)).headers.get('strict-transport-security')).toBe(hsts);
      expect((await fetch(`${production.base}/docs/`)).headers.get('strict-transport-security')).toBe(hsts);
      expect((await fetch(`${production.base}/nowhere`)).headers.get('strict-transport-security')).toBe(hsts);
      for (const path of ['/v1/me', '/docs/', '/nowhere']) {
        expect((await fetch(`${sandbox.base}${path}`)).headers.get('strict-transport-security')).toBeNull();
      }
    });
  });

  describe('body limits', () => {
    it(`accepts ${DEFAULT_BODY_LIMIT_BYTES} bytes on an ordinary route`, async () => {
      const res = await fetch(`${sandbox.base}/v1/partners/sponsorships`, {
        method: 'POST',
        body: payload(DEFAULT_BODY_LIMIT_BYTES),
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as Received).bodyBytes).toBe(DEFAULT_BODY_LIMIT_BYTES);
    });

    it('refuses 2 MiB on an ordinary route with a 413 Problem, before the app sees it', async () => {
      const res = await fetch(`${sandbox.base}/v1/partners/sponsorships`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Request-Id': 'big-1' },
        body: payload(2 * MiB),
      });
      expect(res.headers.get('x-request-id')).toBe('big-1');
      await expectProblem(res, 'payload_too_large');
      expect(crewA.received.some((r) => r.requestId === 'big-1')).toBe(false);
    });

    it('refuses a chunked body over 1 MiB with a 413 Problem too', async () => {
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < 4; i++) controller.enqueue(new Uint8Array(payload(MiB / 2)));
          controller.close();
        },
      });
      const res = await fetch(`${sandbox.base}/v1/partners/sponsorships`, {
        method: 'POST',
        headers: { 'X-Request-Id': 'big-chunked' },
        body: stream,
        duplex: 'half',
      } as RequestInit);
      expect(res.headers.get('x-request-id')).toBe('big-chunked');
      await expectProblem(res, 'payload_too_large');
      expect(crewA.received.some((r) => r.requestId === 'big-chunked')).toBe(false);
    });

    it('accepts 2 MiB on the reconcile route and refuses more than 5 MiB there', async () => {
      const ok = await fetch(`${sandbox.base}/v1/partners/sponsorships/reconcile`, {
        method: 'POST',
        body: payload(2 * MiB),
      });
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as Received).bodyBytes).toBe(2 * MiB);

      const tooBig = await fetch(`${sandbox.base}/v1/partners/sponsorships/reconcile`, {
        method: 'POST',
        body: payload(RECONCILE_BODY_LIMIT_BYTES + 1),
      });
      await expectProblem(tooBig, 'payload_too_large');
    });
  });

  describe('the API description it serves itself', () => {
    it('serves /openapi.json as JSON and /openapi.yaml as YAML', async () => {
      const json = await fetch(`${sandbox.base}/openapi.json`);
      expect(json.status).toBe(200);
      expect(json.headers.get('content-type')).toBe('application/json');
      expect(json.headers.get('x-request-id')).toMatch(GENERATED_ID);
      const doc = (await json.json()) as { openapi: string; info: { version: string }; servers: unknown };
      expect(doc.openapi).toBe('3.1.0');
      expect(doc.info.version).toBe('1.0.0');
      // This environment's values: the server is PUBLIC_BASE_URL, Problem types use DOCS_URL.
      expect(doc.servers).toEqual([{ url: 'https://api.example.test', description: 'This environment' }]);
      expect(JSON.stringify(doc)).toContain(`${DOCS_URL}/errors/invalid_token`);

      const yaml = await fetch(`${sandbox.base}/openapi.yaml`);
      expect(yaml.status).toBe(200);
      expect(yaml.headers.get('content-type')).toBe('application/yaml');
      const text = await yaml.text();
      expect(text).toMatch(/^openapi: 3\.1\.0$/m);
      expect(parseYaml(text)).toEqual(doc);
    });

    it('answers a revalidation with 304 and the request id', async () => {
      const etag = (await fetch(`${sandbox.base}/openapi.json`)).headers.get('etag');
      expect(etag).toBeTruthy();
      const res = await fetch(`${sandbox.base}/openapi.json`, { headers: { 'If-None-Match': etag ?? '' } });
      expect(res.status).toBe(304);
      expect(res.headers.get('x-request-id')).toMatch(GENERATED_ID);
    });

    it('redirects /docs to /docs/ (relative, no HTML body) and serves the docs page as HTML', async () => {
      const moved = await fetch(`${sandbox.base}/docs`, { redirect: 'manual' });
      expect(moved.status).toBe(301);
      expect(moved.headers.get('location')).toBe('/docs/');
      expect(moved.headers.get('x-request-id')).toMatch(GENERATED_ID);
      expect(await moved.text()).toBe('');

      const page = await fetch(`${sandbox.base}/docs/`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html(;|$)/);
      expect(await page.text()).toContain('href="/docs/reference"');

      // Every Problem type resolves: /docs/errors/<code> is a page, without ".html".
      for (const code of Object.keys(PROBLEMS)) {
        const errorPage = await fetch(`${sandbox.base}/docs/errors/${code}`);
        expect({ code, status: errorPage.status }).toEqual({ code, status: 200 });
        expect(errorPage.headers.get('content-type')).toMatch(/^text\/html(;|$)/);
        expect(await errorPage.text()).toContain(`${DOCS_URL}/errors/${code}`);
      }

      await expectProblem(await fetch(`${sandbox.base}/docs/missing.html`), 'not_found');
      await expectProblem(await fetch(`${sandbox.base}/docs/errors/no_such_code`), 'not_found');
    });

    it('answers other methods with a 405 Problem, not an nginx page', async () => {
      const res = await fetch(`${sandbox.base}/openapi.json`, { method: 'POST', body: '{}' });
      expect(res.headers.get('allow')).toBe('GET, HEAD');
      await expectProblem(res, 'method_not_allowed');
    });
  });

  describe('/internal/* (the internal records API)', () => {
    const path = '/internal/v1/users?email=alex.morgan%40sandbox.test';

    it('is routed to crew-api in sandbox', async () => {
      const res = await fetch(`${sandbox.base}${path}`, { headers: { 'X-Request-Id': 'internal-sandbox' } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as Received).url).toBe(path);
    });

    it('is a 404 Problem in production and never reaches crew-api', async () => {
      await expectProblem(
        await fetch(`${production.base}${path}`, { headers: { 'X-Request-Id': 'internal-prod' } }),
        'not_found',
      );
      expect(receivedBy(crewA, crewB).some((r) => r.requestId === 'internal-prod')).toBe(false);

      // The production gateway does route the public API.
      expect((await fetch(`${production.base}/v1/me`)).status).toBe(200);
    });

    it('cannot be reached in production through another route with dot segments or encoded slashes', async () => {
      const before = receivedBy(crewA, crewB).length;
      // nginx routes this as /v1/me (normalised) but would forward the raw path to crew-api.
      for (const raw of [
        '/internal/v1/x/..%2F..%2F..%2Fv1/me',
        '/internal/v1/x/%2e%2e/%2e%2e/%2e%2e/v1/me',
        '/v1/me/./x',
      ]) {
        const res = await rawGet(production.base, raw);
        expect({ raw, status: res.status }).toEqual({ raw, status: 400 });
        expect(res.headers['content-type']).toBe('application/problem+json');
        expect(JSON.parse(res.body)).toMatchObject({
          type: `${DOCS_URL}/errors/bad_request`,
          instance: res.headers['x-request-id'],
        });
      }
      expect(receivedBy(crewA, crewB)).toHaveLength(before);
    });
  });

  it('logs one JSON line per request to stdout, with the request id and without the query', async () => {
    await fetch(`${sandbox.base}/v1/me?email=secret%40example.test`, {
      headers: { 'X-Request-Id': 'log-line-1' },
    });
    let line: Record<string, unknown> | undefined;
    for (let i = 0; i < 20 && !line; i++) {
      line = sandbox
        .accessLog()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((entry) => entry.request_id === 'log-line-1');
      if (!line) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(line).toMatchObject({ method: 'GET', path: '/v1/me', status: 200 });
    expect(sandbox.accessLog()).not.toContain('secret');
  });

  it("passes the partner's W3C trace context upstream and logs its trace id beside the request id", async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const traceparent = `00-${traceId}-00f067aa0ba902b7-01`;
    const res = await fetch(`${sandbox.base}/v1/me`, {
      headers: { 'X-Request-Id': 'trace-line-1', traceparent, tracestate: 'vendor=abc' },
    });
    const seen = (await res.json()) as Received;
    expect(seen.headers.traceparent).toBe(traceparent);
    expect(seen.headers.tracestate).toBe('vendor=abc');
    expect(seen.headers['x-request-id']).toBe('trace-line-1');
    // Nothing of the trace goes back to the partner.
    expect([...res.headers.keys()].filter((h) => h.startsWith('trace'))).toEqual([]);

    const untraced = await fetch(`${sandbox.base}/v1/me`, { headers: { 'X-Request-Id': 'trace-line-2' } });
    expect(((await untraced.json()) as Received).headers.traceparent).toBeUndefined();

    const lines = () =>
      sandbox
        .accessLog()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    let traced: Record<string, unknown> | undefined;
    let plain: Record<string, unknown> | undefined;
    for (let i = 0; i < 20 && !(traced && plain); i++) {
      traced = lines().find((entry) => entry.request_id === 'trace-line-1');
      plain = lines().find((entry) => entry.request_id === 'trace-line-2');
      if (!(traced && plain)) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(traced).toMatchObject({ trace_id: traceId, traceparent });
    expect(plain).toMatchObject({ trace_id: '', traceparent: '' });
  });
});

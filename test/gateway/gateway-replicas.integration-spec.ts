import http from 'node:http';
import net from 'node:net';
import { freePort } from '../../scripts/lib/net.cjs';
import { startGateway as startNginxGateway, type Gateway } from '../support/nginx';

/**
 * The generated configuration under real nginx in front of two replicas played by small Node
 * servers: which requests go to the other replica, which never do, how a failing replica is
 * left out, what the caller gets when every replica says 503, and whose address the apps see.
 */
jest.setTimeout(30_000);

const DOCS_URL = 'https://docs.example.test';

/** A replica: answers `answer` (default 200 with its name), counts requests and connections. */
class Replica {
  requests: { method: string; url: string; xff: string | undefined }[] = [];
  connections = 0;
  address = '';
  answer: (req: http.IncomingMessage, res: http.ServerResponse) => void = (req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ server: this.name }));
  private readonly server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const xff = req.headers['x-forwarded-for'] as string | undefined;
      this.requests.push({ method: req.method ?? '', url: req.url ?? '', xff });
      this.answer(req, res);
    });
  });

  constructor(readonly name: string) {
    this.server.keepAliveTimeout = 120_000;
    this.server.on('connection', () => this.connections++);
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.address = `127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A replica that dies mid-request: accepts, reads the request, and resets the connection. */
class Breaker {
  connections = 0;
  address = '';
  private readonly server = net.createServer((socket) => {
    this.connections++;
    socket.once('data', () => socket.resetAndDestroy());
  });

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.address = `127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** The gateway under test, with the settings every case here shares. */
function startGateway(env: Record<string, string>): Promise<Gateway> {
  return startNginxGateway({
    // Sandbox: /internal/* is routed (the PATCH below).
    APP_ENV: 'sandbox',
    PUBLIC_BASE_URL: 'https://api.example.test',
    DOCS_URL,
    GATEWAY_UPSTREAM_CONNECT_TIMEOUT: '1s',
    GATEWAY_UPSTREAM_READ_TIMEOUT: '2s',
    // One worker: round robin and failure counts are per worker, so what follows is deterministic.
    GATEWAY_WORKER_PROCESSES: '1',
    ...env,
  });
}

const others = (address: string) => ({
  AUTH_SERVER_UPSTREAMS: address,
  CONSENT_UI_UPSTREAMS: address,
  SPONSORSHIP_API_UPSTREAMS: address,
});

describe('gateway (nginx) in front of two replicas', () => {
  const started: { close(): Promise<void> }[] = [];
  const gateways: Gateway[] = [];
  afterEach(async () => {
    await Promise.all(gateways.splice(0).map((g) => g.stop()));
    await Promise.all(started.splice(0).map((s) => s.close()));
  });
  const replica = async (name: string) => {
    const r = await new Replica(name).start();
    started.push(r);
    return r;
  };
  const gateway = async (env: Record<string, string>) => {
    const g = await startGateway(env);
    gateways.push(g);
    return g;
  };

  it('sends GET, PUT, DELETE and POST to the other replica when one refuses connections, and leaves it out', async () => {
    const live = await replica('live');
    const deadPort = await freePort();
    const gw = await gateway({
      ...others(live.address),
      CREW_API_UPSTREAMS: `127.0.0.1:${deadPort},${live.address}`,
    });
    // A refused connection means nothing was sent: every method may go to the other replica.
    for (const method of ['GET', 'POST', 'PATCH', 'DELETE', 'GET', 'POST']) {
      const res = await fetch(`${gw.base}/v1/me`, { method, body: method === 'GET' ? undefined : '{}' });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ server: 'live' });
    }
    expect(live.requests.map((r) => r.method)).toEqual(['GET', 'POST', 'PATCH', 'DELETE', 'GET', 'POST']);
  });

  it('repeats an idempotent request that broke mid-way on the other replica, but never a POST or PATCH', async () => {
    const breaker = await new Breaker().start();
    started.push(breaker);
    const live = await replica('live');
    const gw = await gateway({
      ...others(live.address),
      CREW_API_UPSTREAMS: `${breaker.address},${live.address}`,
      GATEWAY_UPSTREAM_FAIL_TIMEOUT: '30s',
    });
    // Round robin starts at the first server: the breaker takes the first request.
    const get = await fetch(`${gw.base}/v1/me?n=1`);
    expect(get.status).toBe(200);
    expect(breaker.connections).toBe(1);
    expect(live.requests.map((r) => r.url)).toEqual(['/v1/me?n=1']);
    // The breaker failed once (max_fails=1): it is left out for fail_timeout (30 s here).
    for (let i = 2; i <= 7; i++) expect((await fetch(`${gw.base}/v1/me?n=${i}`)).status).toBe(200);
    expect(breaker.connections).toBe(1);
    expect(live.requests).toHaveLength(7);

    // A second gateway, fresh counts: a POST the breaker swallowed is a 502 Problem, not a repeat.
    const gw2 = await gateway({
      ...others(live.address),
      CREW_API_UPSTREAMS: `${breaker.address},${live.address}`,
      GATEWAY_UPSTREAM_FAIL_TIMEOUT: '1s',
    });
    const before = live.requests.length;
    for (const method of ['POST', 'PATCH']) {
      const connections = breaker.connections;
      // Each gateway's round robin may be on either server: send until the breaker has it.
      let res: Response | undefined;
      for (let i = 0; i < 6 && breaker.connections === connections; i++) {
        res = await fetch(`${gw2.base}/internal/v1/crew/u/profile?m=${method}${i}`, { method, body: '{}' });
        if (breaker.connections === connections) expect(res.status).toBe(200);
        else {
          expect(res.status).toBe(502);
          expect(res.headers.get('content-type')).toBe('application/problem+json');
          expect(((await res.json()) as { type: string }).type).toBe(`${DOCS_URL}/errors/bad_gateway`);
        }
      }
      expect(breaker.connections).toBe(connections + 1);
      // Wait out the breaker's fail_timeout so the next method meets it again (nginx counts it in
      // whole seconds of its clock: 1s is up to 2 s).
      await new Promise((resolve) => setTimeout(resolve, 2_300));
    }
    // Only the requests that went to the live replica first arrived there; none was repeated.
    const repeated = live.requests.slice(before).filter((r) => r.url.includes('?m='));
    expect(new Set(repeated.map((r) => r.url)).size).toBe(repeated.length);
    expect(repeated.every((r) => r.method === 'POST' || r.method === 'PATCH')).toBe(true);
  });

  it('still reaches a replica that is back while the gateway has left every replica out', async () => {
    const a = await replica('a');
    const b = await replica('b');
    const gw = await gateway({
      ...others(a.address),
      CREW_API_UPSTREAMS: `${a.address},${b.address}`,
      GATEWAY_UPSTREAM_FAIL_TIMEOUT: '30s',
    });
    // Both replicas break one request: the GET fails on both, and both are left out for 30 s.
    const broken = (_req: http.IncomingMessage, res: http.ServerResponse) => res.socket?.destroy();
    a.answer = broken;
    b.answer = broken;
    const failed = await fetch(`${gw.base}/v1/me`);
    expect(failed.status).toBe(502);
    // a, b, then the backup pass: 3 tries, each on a replica that broke it.
    expect(a.requests.length + b.requests.length).toBe(3);
    // Both are back; nginx cannot know it, but a request still finds one (the backup pass).
    a.answer = (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"server":"a"}');
    b.answer = (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"server":"b"}');
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${gw.base}/v1/me`);
      expect(res.status).toBe(200);
    }
  });

  it("passes the app's own 503 Problem through when every replica answers 503, request after request", async () => {
    const problem = (name: string) =>
      JSON.stringify({ type: `${DOCS_URL}/errors/service_unavailable`, status: 503, detail: name });
    const a = await replica('a');
    const b = await replica('b');
    for (const r of [a, b]) {
      r.answer = (_req, res) =>
        res.writeHead(503, { 'content-type': 'application/problem+json' }).end(problem(r.name));
    }
    const gw = await gateway({ ...others(a.address), CREW_API_UPSTREAMS: `${a.address},${b.address}` });
    const seen = new Set<string>();
    for (let i = 0; i < 8; i++) {
      const res = await fetch(`${gw.base}/v1/me`);
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      const body = await res.text();
      expect([problem('a'), problem('b')]).toContain(body);
      seen.add(body);
    }
    // Both replicas stay in rotation: neither is taken out for a legitimate answer.
    expect(seen.size).toBe(2);
    expect(a.requests.length + b.requests.length).toBe(8);
  });

  it('gives the apps the connecting address as the client when no proxy is trusted', async () => {
    const live = await replica('live');
    const gw = await gateway({ ...others(live.address), CREW_API_UPSTREAMS: live.address });
    await fetch(`${gw.base}/v1/me`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect(live.requests[0].xff).toBe('203.0.113.9, 127.0.0.1');
  });

  it('gives the apps the browser address behind GATEWAY_TRUSTED_PROXIES, last in X-Forwarded-For', async () => {
    const live = await replica('live');
    const gw = await gateway({
      ...others(live.address),
      CREW_API_UPSTREAMS: live.address,
      GATEWAY_TRUSTED_PROXIES: '127.0.0.1,10.0.0.0/8',
    });
    // A client-supplied entry, the browser as the load balancer saw it, then an internal hop.
    await fetch(`${gw.base}/v1/me`, {
      headers: { 'x-forwarded-for': '198.51.100.1, 203.0.113.9, 10.2.3.4' },
    });
    const xff = live.requests[0].xff?.split(/,\s*/);
    expect(xff?.at(-1)).toBe('203.0.113.9');
    // Without a header, the connecting address is still the client.
    await fetch(`${gw.base}/v1/me`);
    expect(live.requests[1].xff).toBe('127.0.0.1');
  });
});

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls, { type TLSSocket } from 'node:tls';
import type { Resolver } from '@svc/platform';
import { WebhookSender } from './webhook-sender';

// A local receiver stands in for the partner; a fake resolver plays the partner's DNS, including
// one that rebinds (answers a checked address first, an internal one afterwards).

interface Seen {
  host: string | undefined;
  servername: string | false | null | undefined;
  body: string;
}

function listen(server: http.Server | https.Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
}

function receiver(seen: Seen[], status = 204, headers: http.OutgoingHttpHeaders = {}) {
  return (req: http.IncomingMessage, res: http.ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ host: req.headers.host, servername: (req.socket as TLSSocket).servername, body });
      res.writeHead(status, headers).end();
    });
  };
}

/** The sender as the dispatcher's config makes it, with a stand-in DNS. */
const senderWith = (resolver: Resolver, connections = 4, lookupsPerPartner = 4) =>
  new WebhookSender(
    {
      APP_ENV: 'sandbox',
      WEBHOOK_CONNECTIONS_PER_TARGET: connections,
      WEBHOOK_TIMEOUT_MS: 2000,
      WEBHOOK_DNS_LOOKUPS_PER_PARTNER: lookupsPerPartner,
      WEBHOOK_DNS_SERVERS: [],
    },
    resolver,
  );

const request = (url: string, clientId = 'p1') => ({
  clientId,
  url,
  headers: { 'content-type': 'application/json', 'x-svc-event-id': 'evt_1' },
  body: '{"id":"evt_1"}',
  timeoutMs: 2000,
});

describe('WebhookSender: the connection is pinned to the address the SSRF guard approved', () => {
  const seen: Seen[] = [];
  const server = http.createServer(receiver(seen));
  let port = 0;
  let sender: WebhookSender;
  let answers: string[][];
  let lookups = 0;

  beforeAll(async () => {
    port = await listen(server);
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  beforeEach(() => {
    seen.length = 0;
    lookups = 0;
    // First answer: loopback (approved in the sandbox); every later one: an internal address.
    answers = [['127.0.0.1'], ['10.0.0.5']];
    sender = senderWith(() => {
      lookups += 1;
      return Promise.resolve(answers[Math.min(lookups, answers.length) - 1]);
    });
  });
  afterEach(() => sender.onModuleDestroy());

  it('connects to the checked address, resolving the name once, with the partner’s name as Host', async () => {
    // `.invalid` never resolves (RFC 6761): only the pinned address can have reached the receiver.
    const outcome = await sender.post(request(`http://partner.invalid:${port}/hook`));
    expect(outcome).toEqual({ ok: true, statusCode: 204, error: null, responseBody: '' });
    expect(lookups).toBe(1);
    expect(seen).toEqual([
      { host: `partner.invalid:${port}`, servername: undefined, body: '{"id":"evt_1"}' },
    ]);
  });

  it('refuses the next attempt when the name now points inside, and sends nothing', async () => {
    await sender.post(request(`http://partner.invalid:${port}/hook`));
    const second = await sender.post(request(`http://partner.invalid:${port}/hook`));
    // Not loopback any more, so the sandbox's plain-HTTP exception no longer applies either.
    expect(second).toEqual({
      ok: false,
      statusCode: null,
      error: 'target refused: the target must use HTTPS',
    });
    const secure = await sender.post(request(`https://partner.invalid:${port}/hook`));
    expect(secure).toEqual({
      ok: false,
      statusCode: null,
      error: 'target refused: partner.invalid resolves to a private address',
    });
    expect(seen).toHaveLength(1);
  });

  it('keeps the first KiB of the answer as text, for the partner’s delivery log', async () => {
    const talkative = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(500).end(`${'x'.repeat(1020)}é and then some more`));
    });
    const talkativePort = await listen(talkative);
    try {
      const outcome = await sender.post(request(`http://partner.invalid:${talkativePort}/hook`));
      expect(outcome.statusCode).toBe(500);
      expect(outcome.responseBody).toBe(`${'x'.repeat(1020)}é a`);
      expect(Buffer.byteLength(outcome.responseBody ?? '')).toBe(1024);
    } finally {
      talkative.closeAllConnections();
      await new Promise((r) => talkative.close(r));
    }
  });

  it('does not follow a redirect: a 3xx is a failed attempt', async () => {
    const hops: Seen[] = [];
    const redirecting = http.createServer(receiver(hops, 302, { location: `http://127.0.0.1:${port}/hook` }));
    const redirectPort = await listen(redirecting);
    try {
      const outcome = await sender.post(request(`http://127.0.0.1:${redirectPort}/start`));
      expect(outcome).toEqual({ ok: false, statusCode: 302, error: 'HTTP 302', responseBody: '' });
      expect(hops).toHaveLength(1);
      expect(seen).toHaveLength(0);
    } finally {
      redirecting.closeAllConnections();
      await new Promise((r) => redirecting.close(r));
    }
  });
});

describe('WebhookSender over HTTPS', () => {
  let dir: string;
  let server: https.Server;
  let port = 0;
  const seen: Seen[] = [];
  const sniNames: string[] = [];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wh-sender-'));
    const [keyFile, certFile] = [path.join(dir, 'key.pem'), path.join(dir, 'cert.pem')];
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=partner.invalid'].concat([
        '-keyout',
        keyFile,
        '-out',
        certFile,
      ]),
      { stdio: 'ignore' },
    );
    const context = tls.createSecureContext({
      key: fs.readFileSync(keyFile),
      cert: fs.readFileSync(certFile),
    });
    server = https.createServer(
      {
        SNICallback: (name, done) => {
          sniNames.push(name);
          done(null, context);
        },
      },
      receiver(seen),
    );
    server.on('tlsClientError', () => undefined);
    port = await listen(server);
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('pins the address but keeps the partner’s hostname for SNI and the certificate check', async () => {
    const sender = senderWith(() => Promise.resolve(['127.0.0.1']));
    try {
      const outcome = await sender.post(request(`https://partner.invalid:${port}/hook`));
      expect(sniNames).toEqual(['partner.invalid']);
      // The certificate is self-signed, so the client's check fails: it ran, on the pinned socket.
      expect(outcome.ok).toBe(false);
      expect(outcome.error).toBe('tls (DEPTH_ZERO_SELF_SIGNED_CERT)');
      expect(seen).toHaveLength(0);
    } finally {
      sender.onModuleDestroy();
    }
  });
});

/**
 * A local partner endpoint answering with `handler`, and a sender allowed `connections` to it;
 * `run` gets the sender and the endpoint's URL. Both are closed afterwards, whatever happens.
 */
async function withPartner(
  handler: http.RequestListener,
  run: (sender: WebhookSender, url: string, server: http.Server) => Promise<void>,
  connections = 4,
): Promise<void> {
  const server = http.createServer(handler);
  const port = await listen(server);
  const sender = senderWith(() => Promise.resolve(['127.0.0.1']), connections);
  try {
    await run(sender, `http://partner.invalid:${port}/hook`, server);
  } finally {
    sender.onModuleDestroy();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

describe('WebhookSender: connections per partner endpoint', () => {
  it('never opens more than WEBHOOK_CONNECTIONS_PER_TARGET, and reuses them for a burst', async () => {
    let open = 0;
    let mostOpen = 0;
    let opened = 0;
    let answered = 0;
    const handler: http.RequestListener = (req, res) => {
      req.resume();
      // Answer a little later, so that the burst really competes for connections.
      req.on('end', () => setTimeout(() => res.writeHead(204).end(), 5));
      answered += 1;
    };
    await withPartner(
      handler,
      async (sender, url, server) => {
        server.on('connection', (socket) => {
          opened += 1;
          open += 1;
          mostOpen = Math.max(mostOpen, open);
          socket.on('close', () => (open -= 1));
        });
        const outcomes = await Promise.all(Array.from({ length: 30 }, () => sender.post(request(url))));
        expect(outcomes.every((o) => o.ok)).toBe(true);
        expect(answered).toBe(30);
        expect(mostOpen).toBeLessThanOrEqual(3);
        expect(opened).toBeLessThanOrEqual(3);
      },
      3,
    );
  });
});

describe('WebhookSender: the budget covers the whole exchange', () => {
  const cases: [string, http.RequestListener][] = [
    ['no answer at all', (req) => req.resume()],
    [
      'headers, then a body that never ends',
      (req, res) => {
        req.resume();
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('still ');
      },
    ],
  ];

  it.each(cases)('%s: a failed attempt called "timeout", within the budget', async (_name, handler) => {
    await withPartner(handler, async (sender, url) => {
      const started = Date.now();
      const outcome = await sender.post({ ...request(url), timeoutMs: 300 });
      const took = Date.now() - started;
      expect(outcome).toEqual({ ok: false, statusCode: null, error: 'timeout' });
      expect(took).toBeGreaterThanOrEqual(290);
      expect(took).toBeLessThan(2000);
    });
  });

  it('a connection the partner drops mid-answer is reported as such, not as a timeout', async () => {
    const handler: http.RequestListener = (req, res) => {
      req.resume();
      res.writeHead(200);
      res.write('partial');
      setTimeout(() => res.socket?.destroy(), 20);
    };
    await withPartner(handler, async (sender, url) => {
      const outcome = await sender.post(request(url));
      expect(outcome.ok).toBe(false);
      expect(outcome.error).not.toBe('timeout');
      expect(outcome.error).toMatch(/aborted|reset|socket/i);
    });
  });
});

describe('WebhookSender: name lookups run under the attempt’s budget, a few per partner at once', () => {
  /** A partner's DNS that never answers (`slow.invalid`); every other name answers loopback at once. */
  function hangingDns() {
    const asked: string[] = [];
    const resolver: Resolver = (hostname) => {
      asked.push(hostname);
      return hostname === 'slow.invalid' ? new Promise(() => undefined) : Promise.resolve(['127.0.0.1']);
    };
    return { resolver, asked };
  }

  it('ends an attempt whose lookup never answers within its budget, as a timeout, sending nothing', async () => {
    const { resolver } = hangingDns();
    const sender = senderWith(resolver);
    try {
      const started = Date.now();
      const outcome = await sender.post({ ...request('http://slow.invalid:9/hook'), timeoutMs: 300 });
      const took = Date.now() - started;
      expect(outcome).toEqual({ ok: false, statusCode: null, error: 'timeout' });
      expect(took).toBeGreaterThanOrEqual(290);
      expect(took).toBeLessThan(1000);
    } finally {
      sender.onModuleDestroy();
    }
  });

  it('counts the lookup in the budget: what is left of it is all the exchange gets', async () => {
    let answer: (addresses: string[]) => void = () => undefined;
    const sender = senderWith(() => new Promise((resolve) => (answer = resolve)));
    await withPartner(
      (req) => req.resume(),
      async (_unused, url) => {
        const started = Date.now();
        const outcome = sender.post({ ...request(url), timeoutMs: 400 });
        // DNS answers after 250 ms; the endpoint never does: the attempt ends at 400 ms, not 650.
        setTimeout(() => answer(['127.0.0.1']), 250);
        expect(await outcome).toEqual({ ok: false, statusCode: null, error: 'timeout' });
        expect(Date.now() - started).toBeLessThan(600);
      },
    );
    sender.onModuleDestroy();
  });

  it('holds at most WEBHOOK_DNS_LOOKUPS_PER_PARTNER lookups of a slow partner, and none of another partner’s', async () => {
    const { resolver, asked } = hangingDns();
    const sender = senderWith(resolver, 4, 2);
    await withPartner(
      (req, res) => {
        req.resume();
        req.on('end', () => res.writeHead(204).end());
      },
      async (_unused, url) => {
        const port = new URL(url).port;
        const started = Date.now();
        // Ten attempts of the slow partner at once: two lookups go out, eight wait for them.
        const slow = Array.from({ length: 10 }, () =>
          sender.post({ ...request(`http://slow.invalid:${port}/hook`, 'slow'), timeoutMs: 500 }),
        );
        // Meanwhile another partner's twenty attempts resolve and are answered at once.
        const quick = await Promise.all(
          Array.from({ length: 20 }, () =>
            sender.post(request(`http://quick.invalid:${port}/hook`, 'quick')),
          ),
        );
        expect(quick.every((o) => o.ok)).toBe(true);
        expect(Date.now() - started).toBeLessThan(300);
        const outcomes = await Promise.all(slow);
        expect(outcomes.every((o) => o.error === 'timeout')).toBe(true);
        expect(Date.now() - started).toBeLessThan(1000);
        expect(asked.filter((h) => h === 'slow.invalid')).toHaveLength(2);
      },
    );
    sender.onModuleDestroy();
  });
});

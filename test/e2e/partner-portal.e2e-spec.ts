import { execFileSync } from 'node:child_process';
import { createHash, createPublicKey, randomBytes, verify } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import net, { type AddressInfo } from 'node:net';
import { Pool } from 'pg';
import type { Page } from 'playwright-core';
import { SANDBOX_SEATS } from '@svc/contracts';
import { axeViolations, sidewaysOverflow, tabOrder, launchBrowser, type Browser } from '../support/browser';
import { basicAuthorization, partner } from '../support/factories';
import { request, type HttpResponse } from '../support/http';
import { eventually } from '../support/services';
import { startSystem, type RunningSystem } from '../support/system';
import { WebhookReceiver } from '../support/webhook-receiver';
import { authorize, bearer, json, type RegisteredPartner, registerPartner } from '../support/e2e-client';

/**
 * The partner portal (issue 41) through the gateway, every app a process: the single-use link of
 * `POST /v1/partners/portal/sessions`, the portal session it starts, its pages and actions (the
 * API's own rules, each action recorded with the session), framing only by the framing origins
 * registered for the partner, isolation between partners, and the pages in Chromium (axe-core WCAG 2.1 AA, 320 px,
 * the keyboard). Actions run on partners this file registers itself (the partners CLI); the sandbox
 * partners are only read.
 */
jest.setTimeout(180_000);

const REDELIVERIES_PER_HOUR = 3;
/** Endpoint tests per hour (enabling and the portal's test events together); no test here needs more. */
const CHECKS_PER_HOUR = 6;
const SESSIONS = '/v1/partners/portal/sessions';
const A = partner('sandbox-partner');
const B = partner('sandbox-partner-b');
const SUSPENDED = partner('sandbox-partner-suspended');
const basic = (p: { client_id: string; client_secret: string }) =>
  basicAuthorization(p.client_id, p.client_secret);
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

let system: RunningSystem;
let receiver: WebhookReceiver;
let browser: Browser;
let db: Pool;
const answers = new Map<string, number>();

const url = (p: string) => `${system.baseUrl}${p}`;

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  system = await startSystem({
    label: 'partner-portal',
    env: {
      WEBHOOK_REDELIVERIES_PER_HOUR: String(REDELIVERIES_PER_HOUR),
      WEBHOOK_ENDPOINT_CHECKS_PER_HOUR: String(CHECKS_PER_HOUR),
      WEBHOOK_TIMEOUT_MS: '2000',
    },
  });
  // The partners' dashboards that frame the portal are https pages with a self-signed certificate.
  browser = await launchBrowser({ ignoreHTTPSErrors: true });
  db = new Pool({ connectionString: process.env.DATABASE_URL, max: 2 });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await db?.end();
  await system?.stop();
  await receiver?.close();
}, 120_000);

/** A partner of this file alone, its webhooks on the receiver (answering `answers.get(hook)`). */
const newPartner = (label: string, redirectUri?: string) =>
  registerPartner({ system, receiver, answers }, `e2e-portal-${label}`, `Portal ${label}`, redirectUri);

async function createLink(authorization: string): Promise<HttpResponse> {
  return request(url(SESSIONS), { method: 'POST', headers: { authorization }, timeoutMs: 30_000 });
}

async function linkOf(authorization: string): Promise<string> {
  const res = await createLink(authorization);
  expect(res.status).toBe(201);
  return res.json<{ url: string }>().url;
}

/** The link as the gateway serves it (PUBLIC_BASE_URL may name another host of this machine). */
function viaGateway(link: string): string {
  const u = new URL(link);
  return url(`${u.pathname}${u.search}`);
}

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const hiddenField = (html: string, name: string) =>
  new RegExp(`name="${name}" value="([^"]+)"`).exec(html)?.[1];

/** The button of a link's page: POST /portal/open with its token (and CSRF token, when it asks). */
async function pressOpen(page: HttpResponse, cookie?: string): Promise<HttpResponse> {
  const token = hiddenField(page.text, 'token');
  if (!token) throw new Error(`no link form in: ${page.text.slice(0, 500)}`);
  const csrf = hiddenField(page.text, 'csrf');
  return request(url('/portal/open'), {
    method: 'POST',
    headers: { ...FORM, ...(cookie ? { cookie } : {}) },
    body: new URLSearchParams({ token, ...(csrf ? { csrf } : {}) }).toString(),
    timeoutMs: 30_000,
  });
}

function portalCookieIn(res: HttpResponse): string {
  const setCookie = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  const cookie = setCookie.find((c) => c.startsWith('svc_portal='));
  if (!cookie) throw new Error(`no portal cookie in ${JSON.stringify(setCookie)}`);
  return cookie;
}

/** A portal session driven over HTTP: its cookie, and the CSRF token of the last page. */
class PortalClient {
  csrf = '';
  private constructor(readonly cookie: string) {}

  /** Visits the link (its page spends nothing) and presses its button, as a person does. */
  static async open(link: string): Promise<PortalClient> {
    const page = await request(viaGateway(link), { timeoutMs: 30_000 });
    expect(page.status).toBe(200);
    const res = await pressOpen(page);
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/portal');
    return new PortalClient(portalCookieIn(res).split(';')[0]);
  }

  async get(path: string): Promise<HttpResponse> {
    const res = await request(url(path), { headers: { cookie: this.cookie }, timeoutMs: 30_000 });
    this.csrf = /name="csrf" value="([^"]+)"/.exec(res.text)?.[1] ?? this.csrf;
    return res;
  }

  async post(path: string, fields: Record<string, string> = {}, csrf = true): Promise<HttpResponse> {
    if (csrf && !this.csrf) await this.get('/portal');
    const body = new URLSearchParams({ ...fields, ...(csrf ? { csrf: this.csrf } : {}) }).toString();
    return request(url(path), {
      method: 'POST',
      headers: { cookie: this.cookie, ...FORM },
      body,
      timeoutMs: 30_000,
    });
  }
}

/** A key and self-signed certificate for `localhost`, made with openssl, for the dashboards below. */
function selfSignedLocalhost(): { key: Buffer; cert: Buffer } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-dashboard-tls-'));
  try {
    const [key, cert] = [path.join(dir, 'key.pem'), path.join(dir, 'cert.pem')];
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost',
        '-keyout',
        key,
        '-out',
        cert,
      ],
      { stdio: 'ignore' },
    );
    return { key: fs.readFileSync(key), cert: fs.readFileSync(cert) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A partner's dashboard: an https page server on this machine's loopback (framing origins are
 * https only), answering every request with `body()`.
 */
async function serve(tls: { key: Buffer; cert: Buffer }, body: () => string): Promise<https.Server> {
  const server = https.createServer(tls, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(body());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** https on this machine's loopback in front of a local http port (the gateway), with `tls`'s certificate. */
async function tlsRelay(tls: { key: Buffer; cert: Buffer }, port: number): Promise<TlsServer> {
  const server = createTlsServer(tls, (client) => {
    const upstream = net.connect(port, '127.0.0.1');
    client.pipe(upstream).pipe(client);
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      a.on('error', () => a.destroy());
      a.on('close', () => b.destroy());
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

const deliveryIdsIn = (html: string) => [...new Set(html.match(/dlv_[A-Za-z0-9_-]{16,}/g) ?? [])];

async function deliveriesOf(p: RegisteredPartner): Promise<{ delivery_id: string; status: string }[]> {
  const res = await json(url('/v1/partners/webhooks/deliveries?limit=200'), 'GET', p.basic);
  expect(res.status).toBe(200);
  return res.json<{ items: { delivery_id: string; status: string }[] }>().items;
}

async function portalActions(
  clientId: string,
): Promise<{ portal_session: string; action: string; outcome: string }[]> {
  const { rows } = await db.query<{ portal_session: string; action: string; outcome: string }>(
    `SELECT portal_session, action, outcome FROM webhooks.portal_actions WHERE client_id = $1 ORDER BY id`,
    [clientId],
  );
  return rows;
}

describe('POST /v1/partners/portal/sessions', () => {
  it('answers 201 with a single-use link to the portal and when it expires (5 minutes), metered and not cached', async () => {
    const before = Date.now();
    const res = await createLink(basic(A));
    expect(res.status).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(Number(res.headers['x-ratelimit-limit'])).toBeGreaterThan(0);
    const body = res.json<{ url: string; expires_at: string }>();
    expect(Object.keys(body).sort()).toEqual(['expires_at', 'url']);
    expect(body.url).toMatch(/\/portal\/open\?token=[A-Za-z0-9_-]{43}$/);
    const ttl = Date.parse(body.expires_at) - before;
    expect(ttl).toBeGreaterThan(4.5 * 60_000);
    expect(ttl).toBeLessThanOrEqual(5 * 60_000 + 5_000);
    // Only the token's SHA-256 is stored.
    const token = new URL(body.url).searchParams.get('token')!;
    const { rows } = await db.query(`SELECT * FROM auth.portal_links WHERE client_id = $1`, [A.client_id]);
    expect(rows.some((r: { token_digest: string }) => r.token_digest === sha256(token))).toBe(true);
    expect(JSON.stringify(rows)).not.toContain(token);
  });

  it('refuses a suspended partner with 403 insufficient_scope, and wrong credentials with 401', async () => {
    const suspended = await createLink(basic(SUSPENDED));
    expect(suspended.status).toBe(403);
    expect(suspended.json<{ type: string }>().type).toMatch(/\/errors\/insufficient_scope$/);
    const wrong = await createLink(basicAuthorization(A.client_id, 'not-the-secret'));
    expect(wrong.status).toBe(401);
    expect(wrong.headers['www-authenticate']).toBe('Basic realm="partners"');
    const none = await request(url(SESSIONS), { method: 'POST', timeoutMs: 30_000 });
    expect(none.status).toBe(401);
  });
});

describe('the link and the portal session', () => {
  it('is spent by the POST of its page’s button, never by a GET (a link preview or a mail scanner)', async () => {
    const link = await linkOf(basic(A));
    const token = new URL(link).searchParams.get('token')!;
    // Fetched twice, as a chat preview and a scanner would: a page with a button, nothing spent.
    for (let i = 0; i < 2; i++) {
      const page = await request(viaGateway(link), { timeoutMs: 30_000 });
      expect(page.status).toBe(200);
      expect(page.text).toContain('Open the partner portal');
      expect(page.text).toContain('Sandbox Partner');
      expect(page.text).toMatch(/<form method="post" action="\/portal\/open"/);
      expect(page.headers['set-cookie']).toBeUndefined();
      expect(page.headers['cache-control']).toBe('no-store');
      expect(page.headers['referrer-policy']).toBe('no-referrer');
    }
    const { rows } = await db.query<{ used_at: Date | null }>(
      `SELECT used_at FROM auth.portal_links WHERE token_digest = $1`,
      [sha256(token)],
    );
    expect(rows).toEqual([{ used_at: null }]);

    const opened = await pressOpen(await request(viaGateway(link), { timeoutMs: 30_000 }));
    expect(opened.status).toBe(303);
    expect(opened.headers.location).toBe('/portal');
    const { rows: spent } = await db.query<{ used: boolean }>(
      `SELECT used_at IS NOT NULL AS used FROM auth.portal_links WHERE token_digest = $1`,
      [sha256(token)],
    );
    expect(spent).toEqual([{ used: true }]);
  });

  it('works once: the second visit shows an expired page and none of the partner’s data', async () => {
    const link = await linkOf(basic(A));
    const page = await request(viaGateway(link), { timeoutMs: 30_000 });
    const opened = await pressOpen(page);
    const portal = portalCookieIn(opened).split(';')[0];
    const overview = await request(url('/portal'), { headers: { cookie: portal }, timeoutMs: 30_000 });
    expect(overview.status).toBe(200);
    expect(overview.text).toContain('Sandbox Partner');

    for (const again of [
      await request(viaGateway(link), { headers: { cookie: portal }, timeoutMs: 30_000 }),
      await pressOpen(page, portal),
    ]) {
      expect(again.status).toBe(410);
      expect(again.text).toContain('This portal link has expired');
      expect(again.text).not.toContain('Sandbox Partner');
      expect(again.headers['set-cookie']).toBeUndefined();
    }
  });

  it('asks before it replaces another partner’s portal session open in this browser', async () => {
    const a = await PortalClient.open(await linkOf(basic(A)));
    const linkOfB = await linkOf(basic(B));
    const asked = await request(viaGateway(linkOfB), { headers: { cookie: a.cookie }, timeoutMs: 30_000 });
    expect(asked.status).toBe(200);
    expect(asked.text).toMatch(
      /You are signed in to the portal as <strong class="partner">Sandbox Partner<\/strong>/,
    );
    expect(asked.text).toContain('Continue as Sandbox Partner B');

    // The link alone (sent by someone, or posted by another site's form) does not replace it.
    const unasked = await request(url('/portal/open'), {
      method: 'POST',
      headers: { ...FORM, cookie: a.cookie },
      body: new URLSearchParams({ token: new URL(linkOfB).searchParams.get('token')! }).toString(),
      timeoutMs: 30_000,
    });
    expect(unasked.status).toBe(200);
    expect(unasked.text).toContain('Continue as Sandbox Partner B');
    expect(unasked.headers['set-cookie']).toBeUndefined();
    expect((await a.get('/portal')).text).toContain(
      'Partner portal of <strong class="partner">Sandbox Partner</strong>',
    );

    // Confirmed on the page that asked: B's portal, and A's session is over.
    const confirmed = await pressOpen(asked, a.cookie);
    expect(confirmed.status).toBe(303);
    const b = portalCookieIn(confirmed).split(';')[0];
    expect((await request(url('/portal'), { headers: { cookie: b }, timeoutMs: 30_000 })).text).toContain(
      'Partner portal of <strong class="partner">Sandbox Partner B</strong>',
    );
    expect((await a.get('/portal')).status).toBe(401);
  });

  it('works only within its 5 minutes', async () => {
    const link = await linkOf(basic(A));
    const token = new URL(link).searchParams.get('token')!;
    await db.query(
      `UPDATE auth.portal_links SET created_at = now() - interval '6 minutes', expires_at = now() - interval '1 minute'
        WHERE token_digest = $1`,
      [sha256(token)],
    );
    const late = await request(viaGateway(link), { timeoutMs: 30_000 });
    expect(late.status).toBe(410);
    expect(late.text).not.toContain('Sandbox Partner');
  });

  it('starts a session of its own: an HttpOnly cookie on /portal, stored as a digest, an hour at most', async () => {
    const res = await pressOpen(await request(viaGateway(await linkOf(basic(A))), { timeoutMs: 30_000 }));
    const cookie = portalCookieIn(res);
    expect(cookie).toMatch(/; Path=\/portal(;|$)/);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toMatch(/Max-Age=3600/);
    expect(cookie).not.toMatch(/svc_session/);
    const id = /^svc_portal=([^;]+)/.exec(cookie)![1];
    const { rows } = await db.query<{ id_digest: string; seconds: number; client_id: string }>(
      `SELECT id_digest, extract(epoch FROM expires_at - created_at)::int AS seconds, client_id
         FROM consent.portal_sessions WHERE id_digest = $1`,
      [sha256(id)],
    );
    expect(rows).toEqual([{ id_digest: sha256(id), seconds: 3600, client_id: A.client_id }]);
    const { rows: raw } = await db.query(`SELECT * FROM consent.portal_sessions WHERE id_digest = $1`, [
      sha256(id),
    ]);
    expect(JSON.stringify(raw)).not.toContain(id);

    // An hour later the session is over: no data, nothing to act on.
    await db.query(
      `UPDATE consent.portal_sessions SET created_at = now() - interval '61 minutes', expires_at = now() - interval '1 minute'
        WHERE id_digest = $1`,
      [sha256(id)],
    );
    const ended = await request(url('/portal/deliveries'), {
      headers: { cookie: cookie.split(';')[0] },
      timeoutMs: 30_000,
    });
    expect(ended.status).toBe(401);
    expect(ended.text).toContain('Your portal session has ended');
    expect(ended.text).not.toContain('Sandbox Partner');
  });

  it('ends at the next page once the partner is suspended, and its forms do nothing', async () => {
    const p = await newPartner('suspended-later');
    const session = await PortalClient.open(await linkOf(p.basic));
    expect((await session.get('/portal')).status).toBe(200);
    const suspended = await system.cli('auth-server', ['partners', 'suspend', p.clientId]);
    expect(suspended.code).toBe(0);

    const page = await session.get('/portal/deliveries');
    expect(page.status).toBe(401);
    expect(page.text).toContain('Your portal session has ended');
    expect((await session.post('/portal/endpoint/test')).status).toBe(401);
    expect(await portalActions(p.clientId)).toEqual([]);
    const { rows } = await db.query(`SELECT 1 FROM consent.portal_sessions WHERE client_id = $1`, [
      p.clientId,
    ]);
    expect(rows).toEqual([]);
    // Lifted again, the session stays ended: a new link opens a new one.
    expect((await system.cli('auth-server', ['partners', 'unsuspend', p.clientId])).code).toBe(0);
    expect((await session.get('/portal')).status).toBe(401);
  });

  it('may be framed by no page unless framing origins are registered for the partner, and then by exactly those', async () => {
    const csp = (res: HttpResponse) => res.headers['content-security-policy'];
    // The sandbox partners have none, whatever their redirect URIs: loopback callbacks frame nothing.
    for (const sandbox of [A, B]) {
      const res = await (await PortalClient.open(await linkOf(basic(sandbox)))).get('/portal');
      expect(csp(res)).toMatch(/frame-ancestors 'none'$/);
      expect(res.headers['x-frame-options']).toBe('DENY');
    }
    // A redirect URI with a wildcard host is a callback, not a framing origin.
    const p = await newPartner('framing', 'https://*/cb');
    const before = await (await PortalClient.open(await linkOf(p.basic))).get('/portal');
    expect(csp(before)).toMatch(/frame-ancestors 'none'$/);

    const set = [
      'partners',
      'set-frame-origins',
      p.clientId,
      'https://dash.example',
      'https://b.example:8443',
    ];
    expect((await system.cli('auth-server', set)).code).toBe(0);
    const framed = await PortalClient.open(await linkOf(p.basic));
    const page = await framed.get('/portal');
    expect(csp(page)).toMatch(/; frame-ancestors https:\/\/dash\.example https:\/\/b\.example:8443$/);
    expect(page.headers['x-frame-options']).toBeUndefined();
    expect((await system.cli('auth-server', ['partners', 'list'])).stdout).toContain(
      'https://dash.example https://b.example:8443',
    );

    // Refused, and nothing changes: each must be one CSP host source, https and an exact host.
    for (const bad of [
      'https://*',
      'http://dash.example',
      'https://dash.example/path',
      'https://a.example;script-src *',
    ]) {
      const refused = await system.cli('auth-server', ['partners', 'set-frame-origins', p.clientId, bad]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('framing origin');
    }
    const still = await (await PortalClient.open(await linkOf(p.basic))).get('/portal');
    expect(csp(still)).toMatch(/; frame-ancestors https:\/\/dash\.example https:\/\/b\.example:8443$/);

    expect((await system.cli('auth-server', ['partners', 'clear-frame-origins', p.clientId])).code).toBe(0);
    const cleared = await (await PortalClient.open(await linkOf(p.basic))).get('/portal');
    expect(csp(cleared)).toMatch(/frame-ancestors 'none'$/);
    expect(cleared.headers['x-frame-options']).toBe('DENY');

    // Pages without a session can be framed by nobody.
    const expired = await request(url('/portal/open?token=nope'), { timeoutMs: 30_000 });
    expect(csp(expired)).toMatch(/frame-ancestors 'none'/);
    expect(expired.headers['x-frame-options']).toBe('DENY');
  });

  it('loads in a frame on the partner’s own origin, and is refused in a frame anywhere else (Chromium)', async () => {
    // Two dashboards on this machine: the partner's (its registered framing origin) and another
    // site's. Real loopback servers, not routed pages: Chromium lets only a local page frame a local one.
    let html = '';
    const tls = selfSignedLocalhost();
    const dashboards = await Promise.all([serve(tls, () => html), serve(tls, () => html)]);
    const [own, other] = dashboards.map((d) => `https://localhost:${(d.address() as AddressInfo).port}`);
    // The portal over https too, as it is deployed (a TLS relay in front of the gateway): an http
    // portal in an https dashboard is another site to the browser, which keeps its cookie out.
    const portalTls = await tlsRelay(tls, system.gatewayPort);
    const p = await newPartner('frame');
    expect((await system.cli('auth-server', ['partners', 'set-frame-origins', p.clientId, own])).code).toBe(
      0,
    );
    const page = await browser.context.newPage();
    try {
      // The gateway as localhost, as the dashboards are: same-site, as a partner's dashboard and an
      // https deployment of the portal are with its SameSite=None cookie.
      const embed = (link: string) => {
        const u = new URL(link);
        const src = `https://localhost:${(portalTls.address() as AddressInfo).port}${u.pathname}${u.search}`;
        return `<!doctype html><html lang="en"><title>Dashboard</title><iframe title="Portal" src="${src}"></iframe></html>`;
      };

      html = embed(await linkOf(p.basic));
      await page.goto(`${own}/dashboard`);
      await page.frameLocator('iframe').getByRole('button', { name: 'Open the portal' }).click();
      // The click returns before the frame has navigated: wait for the portal's first page.
      await page.frameLocator('iframe').getByRole('heading', { name: 'Webhook endpoint' }).waitFor();
      await expect(page.frameLocator('iframe').locator('h1').textContent()).resolves.toBe('Webhook endpoint');

      html = embed(await linkOf(p.basic));
      const refused = page.waitForEvent('console', (m) => /frame-ancestors/.test(m.text()));
      await page.goto(`${other}/dashboard`);
      expect((await refused).text()).toContain(`frame-ancestors ${own}`);
      const frame = page.frames().find((f) => f !== page.mainFrame());
      expect(await frame?.content().catch(() => '')).not.toContain('Webhook endpoint');
      expect(frame?.url()).not.toMatch(/\/portal/);
    } finally {
      await page.close();
      for (const d of dashboards) d.close();
      portalTls.close();
    }
  });
});

describe('what the portal shows', () => {
  it('the endpoint, its health and a chart of attempts per hour with a text alternative', async () => {
    const p = await newPartner('show');
    const portal = await PortalClient.open(await linkOf(p.basic));
    expect((await portal.post('/portal/endpoint/test')).status).toBe(200);
    const res = await portal.get('/portal');
    expect(res.status).toBe(200);
    expect(res.text).toContain(p.hookUrl);
    expect(res.text).toContain('Enabled');
    expect(res.text).toMatch(/100\.0 % \(1 attempts\)/);
    expect(res.text).toMatch(/<svg[^>]*role="img"[^>]*aria-labelledby="chart-title chart-summary"/);
    expect(res.text).toContain('1 attempts in the last 24 hours, 1 acknowledged and 0 failed');
    expect(res.text).toContain('Attempts per hour as a table');
    expect(res.text).not.toMatch(/<script/i);
  });

  it('the delivery log with the API’s filters and paging, and one delivery with every attempt, escaped', async () => {
    const p = await newPartner('log');
    const portal = await PortalClient.open(await linkOf(p.basic));
    for (let i = 0; i < 3; i++) expect((await portal.post('/portal/endpoint/test')).status).toBe(200);
    answers.set(p.hook, 500);
    expect((await portal.post('/portal/endpoint/test')).status).toBe(200);

    const all = await portal.get('/portal/deliveries?limit=2');
    expect(all.status).toBe(200);
    expect(deliveryIdsIn(all.text)).toHaveLength(2);
    const next = /href="(\/portal\/deliveries\?[^"]*cursor=[^"]+)"/.exec(all.text)?.[1];
    expect(next).toBeDefined();
    const second = await portal.get(next!.replace(/&amp;/g, '&'));
    expect(deliveryIdsIn(second.text)).toHaveLength(2);
    expect(deliveryIdsIn(second.text)).not.toEqual(expect.arrayContaining(deliveryIdsIn(all.text)));

    const api = await deliveriesOf(p);
    const givenUp = await portal.get('/portal/deliveries?status=given_up');
    expect(deliveryIdsIn(givenUp.text)).toEqual(
      api.filter((d) => d.status === 'given_up').map((d) => d.delivery_id),
    );

    // The API's own validation: a 422 with the field named.
    const bad = await portal.get('/portal/deliveries?since=yesterday');
    expect(bad.status).toBe(422);
    expect(bad.text).toContain('<code>since</code>');

    const failed = api.find((d) => d.status === 'given_up')!;
    const detail = await portal.get(`/portal/deliveries/${failed.delivery_id}`);
    expect(detail.status).toBe(200);
    expect(detail.text).toContain('Attempt 1');
    expect(detail.text).toContain('HTTP 500');
    expect(detail.text).toMatch(/\d+ ms/);
    expect(detail.text).toContain('<pre class="answer">');
  });

  it('seats by status with external_ref, and the program’s live count and cap', async () => {
    const portal = await PortalClient.open(await linkOf(basic(A)));
    const res = await portal.get('/portal/seats?status=invited');
    expect(res.status).toBe(200);
    expect(res.text).toContain('invitee1@sandbox.test');
    expect(res.text).toContain('<code>ext-1</code>');
    expect(res.text).toMatch(
      /<strong>\d+<\/strong> live seats \(invited and active\) of your cap of <strong>\d+<\/strong>/,
    );
    const api = await json(url('/v1/partners/sponsorships?status=invited&limit=200'), 'GET', basic(A));
    for (const seat of api.json<{ items: { email: string }[] }>().items)
      expect(res.text).toContain(seat.email);
    expect(res.text).not.toContain('sps_sandbox_alex_morgan');
  });
});

describe('what the portal does, by the API’s rules, each action recorded with its portal session', () => {
  it('sends a test event, redelivers one delivery (409 while it is retried, 429 past the budget) and replays a range (7 days at most)', async () => {
    const p = await newPartner('act');
    const link = await linkOf(p.basic);
    const portal = await PortalClient.open(link);

    const tested = await portal.post('/portal/endpoint/test');
    expect(tested.status).toBe(200);
    expect(tested.text).toContain('The test event got HTTP 204');
    const [testDelivery] = await deliveriesOf(p);
    expect(testDelivery.status).toBe('delivered');

    // A real event that fails and waits for its retry (+1 minute): still being attempted.
    answers.set(p.hook, 500);
    const { access_token } = await authorize(system, 'jo.kim@sandbox.test', 'profile:read', p.client);
    const sent = await bearer(url('/v1/webhooks/test'), access_token);
    expect(sent.status).toBe(200);
    const pendingId = sent.json<{ delivery_id: string }>().delivery_id;
    await eventually(
      async () => (await deliveriesOf(p)).find((d) => d.delivery_id === pendingId && d.status === 'failed'),
      20_000,
    );
    const retrying = await portal.post(`/portal/deliveries/${pendingId}/redeliver`);
    expect(retrying.status).toBe(409);
    expect(retrying.text).toContain('is still being attempted');

    answers.set(p.hook, 204);
    const statuses: number[] = [];
    for (let i = 0; i <= REDELIVERIES_PER_HOUR; i++) {
      statuses.push((await portal.post(`/portal/deliveries/${testDelivery.delivery_id}/redeliver`)).status);
    }
    expect(statuses).toEqual([...Array(REDELIVERIES_PER_HOUR).fill(202), 429]);

    const tooLong = await portal.post('/portal/replay', {
      since: '2026-01-01T00:00:00Z',
      until: '2026-01-09T00:00:00Z',
      status: 'given_up',
    });
    expect(tooLong.status).toBe(422);
    expect(tooLong.text).toContain('at most 7 days');
    const since = new Date(Date.now() - 3600_000).toISOString();
    const until = new Date(Date.now() + 60_000).toISOString();
    const replayed = await portal.post('/portal/replay', { since, until, status: 'delivered' });
    expect(replayed.status).toBe(202);
    expect(replayed.text).toMatch(/\d+ deliveries queued again/);

    const { rows: sessions } = await db.query<{ ref: string }>(
      `SELECT ref FROM consent.portal_sessions WHERE client_id = $1`,
      [p.clientId],
    );
    expect(sessions).toHaveLength(1);
    const recorded = await portalActions(p.clientId);
    expect(recorded.map((r) => [r.action, r.outcome])).toEqual([
      ['test', 'ok'],
      ['redeliver', 'conflict'],
      ...Array(REDELIVERIES_PER_HOUR).fill(['redeliver', 'ok']),
      ['redeliver', 'rate_limit_exceeded'],
      ['replay', 'invalid_request'],
      ['replay', 'ok'],
    ]);
    expect(new Set(recorded.map((r) => r.portal_session))).toEqual(new Set([sessions[0].ref]));
    expect(sessions[0].ref).toMatch(/^pps_/);
  });

  it('enables a disabled endpoint only after a successful test event', async () => {
    const p = await newPartner('enable');
    expect(
      (await system.cli('webhook-dispatcher', ['deliveries', 'endpoint-disable', p.clientId])).code,
    ).toBe(0);
    const portal = await PortalClient.open(await linkOf(p.basic));
    expect((await portal.get('/portal')).text).toContain('Test and enable');

    answers.set(p.hook, 503);
    const refused = await portal.post('/portal/endpoint/enable');
    expect(refused.status).toBe(200);
    expect(refused.text).toContain('stays disabled');
    let endpoint = await json(url('/v1/partners/webhooks/endpoint'), 'GET', p.basic);
    expect(endpoint.json<{ status: string }>().status).toBe('disabled');

    // Redelivery and replay follow the API: 409 while disabled.
    const [failed] = await deliveriesOf(p);
    expect((await portal.post(`/portal/deliveries/${failed.delivery_id}/redeliver`)).status).toBe(409);

    answers.set(p.hook, 204);
    const enabled = await portal.post('/portal/endpoint/enable');
    expect(enabled.status).toBe(200);
    expect(enabled.text).toContain('Your endpoint is enabled.');
    endpoint = await json(url('/v1/partners/webhooks/endpoint'), 'GET', p.basic);
    expect(endpoint.json<{ status: string }>().status).toBe('enabled');
    expect((await portalActions(p.clientId)).map((r) => r.action)).toEqual(['enable', 'redeliver', 'enable']);
  });

  it('tests the endpoint within one hourly budget with the API’s enable: past it, 429 in both, nothing sent', async () => {
    const p = await newPartner('checks');
    const portal = await PortalClient.open(await linkOf(p.basic));
    for (let i = 0; i < CHECKS_PER_HOUR / 2; i++) {
      expect((await portal.post('/portal/endpoint/test')).status).toBe(200);
      expect((await json(url('/v1/partners/webhooks/endpoint/enable'), 'POST', p.basic)).status).toBe(200);
    }
    const sent = receiver.requests(p.hook).length;
    expect(sent).toBe(CHECKS_PER_HOUR);

    const page = await portal.post('/portal/endpoint/test');
    expect(page.status).toBe(429);
    const retryAfter = Number(page.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(3000);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(page.text).toContain(`used its ${CHECKS_PER_HOUR} endpoint tests per hour`);
    const api = await json(url('/v1/partners/webhooks/endpoint/enable'), 'POST', p.basic);
    expect(api.status).toBe(429);
    expect(api.json<{ type: string }>().type).toMatch(/\/errors\/rate_limit_exceeded$/);
    expect(Number(api.headers['retry-after'])).toBeGreaterThan(3000);
    expect(receiver.requests(p.hook)).toHaveLength(sent);
    expect((await portalActions(p.clientId)).map((r) => r.outcome)).toEqual([
      ...Array(CHECKS_PER_HOUR / 2).fill('ok'),
      'rate_limit_exceeded',
    ]);
  });

  it('makes and replaces the Ed25519 signing key (partners CLI, then the portal): both public keys shown and listed by the API, a test event verifies with each', async () => {
    const p = await newPartner('keys');
    const keysOf = async () => {
      const res = await json(url('/v1/partners/webhooks/signing-keys'), 'GET', p.basic);
      expect(res.status).toBe(200);
      return res.json<{ data: { id: string; public_key: string; expires_at: string | null }[] }>().data;
    };
    const portal = await PortalClient.open(await linkOf(p.basic));
    expect((await portal.get('/portal')).text).toContain('Create a signing key');
    expect(await keysOf()).toEqual([]);

    const made = await system.cli('auth-server', ['partners', 'rotate-signing-key', p.clientId]);
    expect(made.code).toBe(0);
    const [first] = await keysOf();
    expect(made.stdout).toContain(first.public_key);
    expect(made.stdout).not.toMatch(/PRIVATE|MC4CAQAwBQYDK2Vw/);

    const forged = await portal.post('/portal/signing-keys/rotate', {}, false);
    expect(forged.status).toBe(403);
    expect(await keysOf()).toHaveLength(1);
    const rotated = await portal.post('/portal/signing-keys/rotate');
    expect(rotated.status).toBe(200);
    const keys = await keysOf();
    expect(keys.map((k) => k.id)).toEqual([first.id, expect.stringMatching(/^whk_/)]);
    expect(keys[0].expires_at).not.toBeNull();
    for (const k of keys) expect(rotated.text).toContain(k.public_key);
    expect(await portalActions(p.clientId)).toEqual([
      expect.objectContaining({ action: 'rotate_signing_key', outcome: 'ok' }),
    ]);

    expect((await portal.post('/portal/endpoint/test')).status).toBe(200);
    const [delivery] = receiver.requests(p.hook).slice(-1);
    const signed = Buffer.concat([
      Buffer.from(
        `${String(delivery.headers['webhook-id'])}.${String(delivery.headers['webhook-timestamp'])}.`,
      ),
      delivery.rawBody,
    ]);
    const v1a = String(delivery.headers['webhook-signature'])
      .split(' ')
      .filter((e) => e.startsWith('v1a,'))
      .map((e) => Buffer.from(e.slice(4), 'base64'));
    expect(v1a).toHaveLength(2);
    for (const k of keys) {
      const x = Buffer.from(k.public_key.slice(5), 'base64').toString('base64url');
      const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
      expect(v1a.some((sig) => verify(null, signed, publicKey, sig))).toBe(true);
    }
  });

  it('refuses a form without the session’s CSRF token, and does nothing', async () => {
    const p = await newPartner('csrf');
    const portal = await PortalClient.open(await linkOf(p.basic));
    const forged = await portal.post('/portal/endpoint/test', {}, false);
    expect(forged.status).toBe(403);
    const wrong = await portal.post('/portal/endpoint/test', { csrf: 'x'.repeat(43) }, false);
    expect(wrong.status).toBe(403);
    expect(await deliveriesOf(p)).toEqual([]);
    expect(await portalActions(p.clientId)).toEqual([]);
  });
});

describe('isolation: another partner’s ids show and touch nothing', () => {
  let mine: RegisteredPartner;
  let theirs: RegisteredPartner;
  let theirDelivery: string;
  let portal: PortalClient;

  beforeAll(async () => {
    mine = await newPartner('mine');
    theirs = await newPartner('theirs');
    const theirPortal = await PortalClient.open(await linkOf(theirs.basic));
    expect((await theirPortal.post('/portal/endpoint/test')).status).toBe(200);
    expect((await theirPortal.post('/portal/endpoint/test')).status).toBe(200);
    [{ delivery_id: theirDelivery }] = await deliveriesOf(theirs);
    portal = await PortalClient.open(await linkOf(mine.basic));
  });

  it('GET /portal/deliveries/{id}: 404, none of their delivery', async () => {
    const res = await portal.get(`/portal/deliveries/${theirDelivery}`);
    expect(res.status).toBe(404);
    expect(res.text).not.toContain(theirs.hook);
    expect(res.text).not.toContain('Attempt 1');
  });

  it('POST /portal/deliveries/{id}/redeliver: 404, and their log is unchanged', async () => {
    const res = await portal.post(`/portal/deliveries/${theirDelivery}/redeliver`);
    expect(res.status).toBe(404);
    expect(await deliveriesOf(theirs)).toHaveLength(2);
  });

  it('GET /portal and /portal/deliveries: only my endpoint and my deliveries', async () => {
    const overview = await portal.get('/portal');
    expect(overview.text).toContain(mine.hookUrl);
    expect(overview.text).not.toContain(theirs.hook);
    const list = await portal.get('/portal/deliveries?limit=200');
    expect(list.text).not.toContain(theirDelivery);
    // Their list's cursor is only a position: in my session it pages my deliveries.
    const theirPage = await json(url('/v1/partners/webhooks/deliveries?limit=1'), 'GET', theirs.basic);
    const cursor = theirPage.json<{ next_cursor: string }>().next_cursor;
    expect(cursor).toEqual(expect.any(String));
    const withTheirCursor = await portal.get(
      `/portal/deliveries?limit=200&cursor=${encodeURIComponent(cursor)}`,
    );
    expect(withTheirCursor.status).toBe(200);
    for (const d of await deliveriesOf(theirs)) expect(withTheirCursor.text).not.toContain(d.delivery_id);
  });

  it('POST /portal/sign-out ends only this portal session', async () => {
    const other = await PortalClient.open(await linkOf(mine.basic));
    const forged = await other.post('/portal/sign-out', {}, false);
    expect(forged.status).toBe(403);
    expect((await other.post('/portal/sign-out')).status).toBe(200);
    expect((await other.get('/portal')).status).toBe(401);
    expect((await portal.get('/portal')).status).toBe(200);
  });

  it('POST /portal/replay, /portal/endpoint/test and /enable: their log and endpoint are untouched', async () => {
    const since = new Date(Date.now() - 3600_000).toISOString();
    const until = new Date(Date.now() + 60_000).toISOString();
    const replayed = await portal.post('/portal/replay', { since, until, status: 'delivered' });
    expect(replayed.status).toBe(202);
    expect(replayed.text).toContain('0 deliveries queued again');
    expect((await portal.post('/portal/endpoint/test')).status).toBe(200);
    expect((await portal.post('/portal/endpoint/enable')).status).toBe(200);
    expect(await deliveriesOf(theirs)).toHaveLength(2);
    expect((await portalActions(theirs.clientId)).map((r) => r.action)).toEqual(['test', 'test']);
  });

  it('GET /portal/seats: only my seats, also with a cursor of another partner’s list', async () => {
    const seatsOfA = SANDBOX_SEATS.filter((seat) => seat.client_id === A.client_id).flatMap((seat) => [
      seat.sponsorship_id,
      `>${seat.email}<`,
      ...(seat.external_ref ? [`<code>${seat.external_ref}</code>`] : []),
    ]);
    expect(seatsOfA.length).toBeGreaterThan(0);
    const b = await PortalClient.open(await linkOf(basic(B)));
    const res = await b.get('/portal/seats?limit=1');
    expect(res.status).toBe(200);
    for (const seat of seatsOfA) expect(res.text).not.toContain(seat);
    const a = await json(url('/v1/partners/sponsorships?limit=1'), 'GET', basic(A));
    const cursor = a.json<{ next_cursor: string }>().next_cursor;
    const withTheirCursor = await b.get(`/portal/seats?limit=200&cursor=${encodeURIComponent(cursor)}`);
    // Whatever a foreign cursor selects, it selects among B's own seats (b-invitee1…) only.
    for (const seat of seatsOfA) expect(withTheirCursor.text).not.toContain(seat);
  });

  it('a partner without a sponsorship program sees no seats, and one without a webhook URL no endpoint', async () => {
    const res = await portal.get('/portal/seats');
    expect(res.text).toContain('not in a sponsorship program');
    const b = await PortalClient.open(await linkOf(basic(B)));
    expect((await b.get('/portal')).text).toContain('No webhook URL is registered');
    expect((await b.post('/portal/endpoint/test')).status).toBe(409);
  });
});

describe('the partner’s rate limits: the portal spends the API’s budget', () => {
  const PER_MINUTE = 600;

  /**
   * Sends `send()` `concurrency` at a time until one is refused: how many were admitted (a 429 is
   * not counted) and the statuses they got.
   */
  async function spendUntilRefused(send: () => Promise<HttpResponse>, concurrency: number) {
    const statuses = new Set<number>();
    let admitted = 0;
    for (let refused = false; !refused;) {
      for (const res of await Promise.all(Array.from({ length: concurrency }, send))) {
        if (res.status === 429) refused = true;
        else {
          admitted += 1;
          statuses.add(res.status);
        }
      }
    }
    return { admitted, statuses: [...statuses].sort() };
  }

  function expectComeBackPage(res: HttpResponse): void {
    expect(res.status).toBe(429);
    const retryAfter = Number(res.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain(`Come back in ${retryAfter} second`);
    expect(res.text).toContain(`used its ${PER_MINUTE} requests per minute`);
    expect(res.text).toContain('Partner portal of <strong class="partner">');
  }

  it('600 API calls in a minute, then a portal page: a 429 page saying when to come back, nothing done', async () => {
    const p = await newPartner('budget-api');
    const portal = await PortalClient.open(await linkOf(p.basic)); // the link is one API call
    const api = await spendUntilRefused(
      () => json(url('/v1/partners/webhooks/endpoint'), 'GET', p.basic),
      20,
    );
    expect(api).toEqual({ admitted: PER_MINUTE - 1, statuses: [200] });
    expectComeBackPage(await portal.get('/portal'));
    expectComeBackPage(await portal.post('/portal/endpoint/test'));
    expect(await portalActions(p.clientId)).toEqual([]);
  });

  it('600 portal pages and actions in a minute, then an API call: 429 rate_limit_exceeded', async () => {
    const p = await newPartner('budget-portal');
    const portal = await PortalClient.open(await linkOf(p.basic)); // the link is one API call
    expect((await portal.get('/portal')).status).toBe(200); // one page (and the forms' CSRF token)
    let n = 0;
    // Two at a time, as two tabs: more of one partner's portal requests at once than a dispatcher
    // takes (test/e2e/portal-neighbours.e2e-spec.ts) would be refused for that instead.
    const spent = await spendUntilRefused(
      () =>
        n++ % 10 === 0
          ? portal.post('/portal/deliveries/dlv_notoneofyoursnotoneofy/redeliver')
          : portal.get('/portal/deliveries'),
      2,
    );
    // Each page and each form counts once, whatever it got (a redelivery of no delivery: 404).
    expect(spent).toEqual({ admitted: PER_MINUTE - 2, statuses: [200, 404] });
    const res = await json(url('/v1/partners/webhooks/endpoint'), 'GET', p.basic);
    expect(res.status).toBe(429);
    expect(res.json<{ type: string }>().type).toMatch(/\/errors\/rate_limit_exceeded$/);
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });
});

describe('in Chromium: axe-core WCAG 2.1 AA, 320 px, the keyboard alone', () => {
  let page: Page;
  let p: RegisteredPartner;

  beforeAll(async () => {
    p = await newPartner('a11y');
    page = await browser.context.newPage();
    await page.goto(viaGateway(await linkOf(p.basic)));
    expect(await axeViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Open the portal' }).click();
    await page.waitForURL('**/portal');
    expect(new URL(page.url()).pathname).toBe('/portal');
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await page.waitForURL('**/portal/endpoint/test');
  });

  afterAll(async () => {
    await page?.close();
  });

  async function check(path?: string): Promise<void> {
    if (path) await page.goto(url(path));
    await page.setViewportSize({ width: 1024, height: 800 });
    expect(await axeViolations(page)).toEqual([]);
    expect(await sidewaysOverflow(page)).toBe(0);
  }

  it('the result of an action', async () => {
    await check();
  });

  it('the endpoint page, reached and used by keyboard', async () => {
    await check('/portal');
    const order = await tabOrder(page);
    expect(order).toEqual(
      expect.arrayContaining([
        'a: Endpoint',
        'a: Deliveries',
        'a: Seats',
        'summary: Attempts per hour as a table',
        'button: Send a test event',
        'button: Sign out of the portal',
      ]),
    );
    expect(order.indexOf('a: Endpoint')).toBeLessThan(order.indexOf('button: Send a test event'));
  });

  it('the delivery log, its filters and the replay form by keyboard', async () => {
    await check('/portal/deliveries');
    const order = await tabOrder(page, 60);
    for (const control of ['select: ', 'button: Show deliveries', 'button: Replay']) {
      expect(order.some((o) => o.startsWith(control))).toBe(true);
    }
    // Filter with the keyboard alone: the status select, then the submit button.
    await page.getByLabel('Status').first().focus();
    await page.keyboard.press('End');
    await page.getByRole('button', { name: 'Show deliveries' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/status=skipped/);
  });

  it('one delivery with its attempts', async () => {
    const [d] = await deliveriesOf(p);
    await check(`/portal/deliveries/${d.delivery_id}`);
    expect(await tabOrder(page)).toEqual(expect.arrayContaining(['button: Redeliver']));
  });

  it('the delivery log as a table: 50 deliveries in under 2,500 px at 1,100 px wide, stacked on a phone', async () => {
    // 50 finished deliveries in the dispatcher's log, as its retention spec seeds them: sending
    // 50 real events would spend the partner's test budget and only slow the file down.
    const run = randomBytes(4).toString('hex');
    for (let i = 0; i < 50; i++) {
      const id = `dlv_layout_${run}_${String(i).padStart(2, '0')}`;
      await db.query(
        `INSERT INTO webhooks.deliveries
           (delivery_id, event_id, event_type, user_id, client_id, target_url, body, status, attempts, created_at)
         VALUES ($1, $2, 'user.sea_time.updated', 'usr_layout', $3, 'https://partner.example/hooks', '{}',
                 'delivered', 1, now() - make_interval(days => 2, mins => $4))`,
        [id, `evt_layout_${run}_${i}`, p.clientId, i],
      );
      await db.query(
        `INSERT INTO webhooks.delivery_attempts (delivery_id, attempt, started_at, duration_ms, status_code)
         VALUES ($1, 1, now() - make_interval(days => 2, mins => $2), 40, 204)`,
        [id, i],
      );
    }
    await page.goto(url('/portal/deliveries?limit=50'));
    await page.setViewportSize({ width: 1100, height: 800 });
    const rows = page.locator('table.delivery-log tbody tr');
    expect(await rows.count()).toBe(50);
    const height = await page.evaluate<number>(
      `document.querySelector('table.delivery-log').getBoundingClientRect().height`,
    );
    expect(height).toBeLessThanOrEqual(2500);
    const seeded = rows.filter({ hasText: 'evt_layout_' }).first();
    expect(await seeded.locator('td').count()).toBe(7);
    expect(await seeded.innerText()).toMatch(
      /delivered\s+user\.sea_time\.updated\s+evt_layout_\w+\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\s+1\s+HTTP 204/,
    );
    expect(await axeViolations(page)).toEqual([]);
    expect(await sidewaysOverflow(page)).toBe(0);
    // Each row's link leads to its delivery, from the keyboard alone.
    await page.setViewportSize({ width: 1100, height: 800 });
    const order = await tabOrder(page, 80);
    expect(order.filter((o) => /^a: [a-z_.]+, delivery dlv_/.test(o))).toHaveLength(50);
    await seeded.getByRole('link').focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/portal\/deliveries\/dlv_layout_/);
  });

  it('the seats page', async () => {
    await check('/portal/seats');
  });

  it('the expired link page', async () => {
    await check('/portal/open?token=expired');
  });
});

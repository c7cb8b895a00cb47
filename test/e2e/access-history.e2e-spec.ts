import fs from 'node:fs';
import type { Page } from 'playwright-core';
import { member, MEMBER_PASSWORD, partner, type PartnerId } from '../support/factories';
import { axeViolations, sidewaysOverflow, tabOrder, launchBrowser, type Browser } from '../support/browser';
import { startSystem, type RunningSystem } from '../support/system';

/**
 * The crew member's access history and data export (docs/access-history.md), as a member and
 * partners live them: the whole system behind the gateway, Chromium on the real pages. Every
 * page a member sees passes axe-core (WCAG 2.1 AA), fits 320 px and works from the keyboard.
 */
jest.setTimeout(180_000);

const jo = member('jo.kim@sandbox.test');
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

let system: RunningSystem;
let browser: Browser;
let base: string;

beforeAll(async () => {
  // Counts are written every half second here; a minute in production.
  system = await startSystem({ label: 'access-history', env: { ACCESS_READS_FLUSH_MS: '500' } });
  browser = await launchBrowser();
  base = `http://localhost:${system.gatewayPort}`;
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await system?.stop();
}, 60_000);

function authorizeUrl(clientId: PartnerId, scope: string): string {
  const p = partner(clientId);
  const url = new URL(`${base}/oauth/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: p.client_id,
    redirect_uri: p.redirect_uris[0],
    scope,
    state: 'st',
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
  }).toString();
  return url.toString();
}

/** Signs in on the page if asked to. */
async function signInIfAsked(page: Page): Promise<void> {
  if (new URL(page.url()).pathname !== '/login') return;
  await page.getByLabel('Email').fill(jo.email);
  await page.getByLabel('Password').fill(MEMBER_PASSWORD);
  await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Sign in' }).click()]);
  await page.waitForURL((u) => u.pathname !== '/login');
}

/** The member allows `clientId` in the browser; the partner exchanges the code for an access token. */
async function connect(clientId: PartnerId, scope: string): Promise<string> {
  const p = partner(clientId);
  const page = await browser.context.newPage();
  try {
    await page.route(`${new URL(p.redirect_uris[0]).origin}/**`, (route) => route.abort());
    await page.goto(authorizeUrl(clientId, scope));
    await signInIfAsked(page);
    const callback = page.waitForRequest((r) => r.url().startsWith(p.redirect_uris[0]));
    await page.getByRole('button', { name: 'Allow' }).click();
    const code = new URL((await callback).url()).searchParams.get('code');
    if (!code) throw new Error('no code');
    const res = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: p.redirect_uris[0],
        code_verifier: VERIFIER,
        client_id: p.client_id,
        client_secret: p.client_secret,
      }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { access_token: string }).access_token;
  } finally {
    await page.close();
  }
}

async function read(token: string, path: string): Promise<Response> {
  return fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
}

/** The connections page, reloaded until `ready` holds of its text (counts arrive within a flush). */
async function connectionsPage(
  ready: (text: string, page: Page) => boolean | Promise<boolean> = () => true,
): Promise<Page> {
  const page = await browser.context.newPage();
  const until = Date.now() + 20_000;
  for (;;) {
    await page.goto(`${base}/account/connections`);
    await signInIfAsked(page);
    const text = await page.locator('main').innerText();
    if ((await ready(text, page)) || Date.now() > until) return page;
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** The rows of a card's reads table, whitespace collapsed. */
async function rowsOf(cardOf: ReturnType<typeof card>): Promise<string[]> {
  const rows = await cardOf.locator('table.reads tbody tr').allInnerTexts();
  return rows.map((r) => r.replace(/\s+/g, ' ').trim());
}

/**
 * A card's reads of the last 30 days per scope label ("Your name, crew role, …" → 3). Other suites of
 * the run read the same sandbox member today, so the tests compare counts before and after.
 */
async function countsOf(cardOf: ReturnType<typeof card>): Promise<Record<string, number>> {
  if ((await cardOf.count()) === 0) return {};
  const counts: Record<string, number> = {};
  for (const row of await rowsOf(cardOf)) {
    const m = /^(.*) (\d+)$/.exec(row);
    if (m) counts[m[1]] = Number(m[2]);
  }
  return counts;
}

const PROFILE = 'Your name, crew role, country, photo and membership';
const VESSELS = 'Your vessel history: ships, roles and dates of service';
const SEA_TIME = 'Your sea-time totals and your 12-month sea-time trend';
let readsOfB = 0;

/** The card of a connected partner, found by its heading. */
function card(page: Page, name: string) {
  return page.locator('li.connection').filter({ has: page.getByRole('heading', { name, exact: true }) });
}

/** axe-core, 320 px, and the controls the keyboard must reach. */
async function expectUsable(page: Page, controls: readonly RegExp[]): Promise<void> {
  await page.setViewportSize({ width: 1024, height: 768 });
  await expect(axeViolations(page)).resolves.toEqual([]);
  await expect(sidewaysOverflow(page)).resolves.toBeLessThanOrEqual(0);
  await page.setViewportSize({ width: 1024, height: 768 });
  const order = await tabOrder(page, 60);
  expect(order).toEqual(expect.arrayContaining(controls.map((c) => expect.stringMatching(c))));
}

let tokenA: string;
let tokenB: string;

describe('access history', () => {
  it("counts each partner's reads per scope, and the page shows last access and the last 30 days", async () => {
    tokenA = await connect('sandbox-partner', 'profile:read vessels:read');
    tokenB = await connect('sandbox-partner-b', 'profile:read');
    const first = await connectionsPage();
    const beforeA = await countsOf(card(first, 'Sandbox Partner'));
    const beforeB = await countsOf(card(first, 'Sandbox Partner B'));
    await first.close();
    const plus = (before: Record<string, number>, label: string, n: number) => (before[label] ?? 0) + n;

    for (let i = 0; i < 3; i++) expect((await read(tokenA, '/v1/me')).status).toBe(200);
    expect((await read(tokenA, '/v1/me/vessels')).status).toBe(200);
    // Refused reads are not reads: a scope the token lacks (403) counts nothing.
    expect((await read(tokenA, '/v1/me/sea-time')).status).toBe(403);
    expect((await read(tokenB, '/v1/me')).status).toBe(200);

    // Each of the two crew-api replicas adds what it counted every 500 ms: wait for both.
    const page = await connectionsPage(async (_, p) => {
      const a = await countsOf(card(p, 'Sandbox Partner'));
      const b = await countsOf(card(p, 'Sandbox Partner B'));
      return (
        a[PROFILE] >= plus(beforeA, PROFILE, 3) &&
        a[VESSELS] >= plus(beforeA, VESSELS, 1) &&
        b[PROFILE] >= plus(beforeB, PROFILE, 1)
      );
    });
    try {
      const a = card(page, 'Sandbox Partner');
      const b = card(page, 'Sandbox Partner B');
      await expect(a.getByText(/Last access: \d{1,2} \w+ \d{4}, \d{2}:\d{2} UTC/).count()).resolves.toBe(1);
      const countsA = await countsOf(a);
      expect(countsA).toEqual({
        ...beforeA,
        [PROFILE]: plus(beforeA, PROFILE, 3),
        [VESSELS]: plus(beforeA, VESSELS, 1),
      });
      expect(countsA[SEA_TIME]).toBe(beforeA[SEA_TIME]);
      // No partner's numbers appear on another's card.
      readsOfB = plus(beforeB, PROFILE, 1);
      expect(await countsOf(b)).toEqual({ ...beforeB, [PROFILE]: readsOfB });
      await expect(a.locator('table.reads caption').innerText()).resolves.toMatch(
        /Reads by Sandbox Partner in the last 30 days/,
      );
      await expectUsable(page, [/^button: Disconnect/, /^a: Download my data/, /^button: Sign out/]);
    } finally {
      await page.close();
    }
  });

  it("no partner sees any history: none through /v1/*, and the account pages need the member's session", async () => {
    const me = (await (await read(tokenB, '/v1/me')).json()) as Record<string, unknown>;
    expect(JSON.stringify(me)).not.toMatch(/sandbox-partner"|access|reads|last_access/);
    for (const path of ['/v1/me/access-history', '/v1/me/history', '/v1/partners/access-history']) {
      expect([401, 404]).toContain((await read(tokenB, path)).status);
    }
    for (const path of ['/account/connections', '/account/export']) {
      const res = await fetch(`${base}${path}`, {
        headers: { authorization: `Bearer ${tokenB}` },
        redirect: 'manual',
      });
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toMatch(/^\/login\?/);
      expect(res.headers.get('content-disposition')).toBeNull();
    }
  });

  it('a disconnected partner stays under "Previously connected" with its history', async () => {
    // The second test's read of B, once a replica has added it.
    const page = await connectionsPage(
      async (_, p) => ((await countsOf(card(p, 'Sandbox Partner B')))[PROFILE] ?? 0) >= readsOfB + 1,
    );
    try {
      const b = card(page, 'Sandbox Partner B');
      // From the keyboard: focus the button and press Enter.
      await b.getByRole('button', { name: 'Disconnect' }).focus();
      const posted = page.waitForResponse((r) => r.request().method() === 'POST');
      // The whole navigation, the 303's page loaded included: a goto before it ends is interrupted.
      const navigated = page.waitForNavigation({ waitUntil: 'load' });
      await page.keyboard.press('Enter');
      expect((await posted).status()).toBe(303);
      expect((await navigated)?.status()).toBe(200);
      await page.goto(`${base}/account/connections`);
      await expect(
        page.getByRole('heading', { name: 'Sandbox Partner B', exact: true }).count(),
      ).resolves.toBe(0);
      const previous = page.locator('section.previous');
      await expect(previous.getByRole('heading', { name: 'Previously connected' }).count()).resolves.toBe(1);
      const entry = previous.locator('li.connection').filter({ hasText: 'Sandbox Partner B' });
      const text = (await entry.innerText()).replace(/\s+/g, ' ');
      expect(text).toMatch(/Disconnected \d{1,2} \w+ \d{4}, \d{2}:\d{2} UTC/);
      expect(text).toMatch(/Last access: \d{1,2} \w+ \d{4}/);
      // The reads counted in the first test, and one more in the second.
      expect(text).toContain(`${PROFILE} ${readsOfB + 1}`);
      await expectUsable(page, [/^a: Download my data/]);
    } finally {
      await page.close();
    }
    expect((await read(tokenB, '/v1/me')).status).toBe(401);
  });
});

describe('Download my data', () => {
  it('downloads a JSON file of the record, consents, history and sponsorships', async () => {
    const page = await connectionsPage();
    try {
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('link', { name: 'Download my data' }).click(),
      ]);
      expect(download.suggestedFilename()).toMatch(/^crew-record-\d{4}-\d{2}-\d{2}\.json$/);
      const file = await download.path();
      const data = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown[]> & {
        profile: { email: string };
      };
      expect(Object.keys(data)).toEqual(
        expect.arrayContaining([
          'profile',
          'sea_time',
          'vessels',
          'connections',
          'access_history',
          'sponsorships',
        ]),
      );
      expect(data.profile.email).toBe(jo.email);
      const b = data.connections.find(
        (c) => (c as { client_id: string }).client_id === 'sandbox-partner-b',
      ) as {
        granted_at: string;
        revoked_at: string | null;
      };
      expect(Date.parse(b.granted_at)).not.toBeNaN();
      expect(Date.parse(b.revoked_at!)).not.toBeNaN();
      expect(data.access_history.length).toBeGreaterThan(0);
    } finally {
      await page.close();
    }
  });

  it('answers with no-store and as an attachment; a cross-site page cannot start it, even knowing the link', async () => {
    const page = await connectionsPage();
    try {
      const href = await page.getByRole('link', { name: 'Download my data' }).getAttribute('href');
      const link = `${base}${href}`;
      const res = await page.request.get(link);
      expect(res.status()).toBe(200);
      expect(res.headers()['cache-control']).toBe('no-store');
      expect(res.headers()['content-disposition']).toMatch(/^attachment; filename=/);

      // Another site links to the export: the session cookie (SameSite=Lax) goes with the
      // top-level navigation, Sec-Fetch-Site says cross-site, and the answer is a refusal page.
      await page.route('http://elsewhere.test/**', (route) =>
        route.fulfill({
          contentType: 'text/html',
          body: `<!doctype html><title>x</title><a id="go" href="${link}">free stuff</a>`,
        }),
      );
      await page.goto('http://elsewhere.test/');
      const [answer] = await Promise.all([
        page.waitForResponse((r) => r.url().startsWith(`${base}/account/export`)),
        page.click('#go'),
      ]);
      expect(answer.status()).toBe(403);
      expect(answer.headers()['content-disposition']).toBeUndefined();
      await page.waitForLoadState('load');
      await expect(page.getByRole('heading', { name: 'Download not started' }).count()).resolves.toBe(1);
      await expectUsable(page, [/^a: Go to your connected partners/]);
    } finally {
      await page.close();
    }
  });
});

describe('every page a crew member sees: axe-core (WCAG 2.1 AA), 320 px, keyboard', () => {
  it('sign-in', async () => {
    const context = await browser.context.browser()?.newContext();
    const page = context ? await context.newPage() : await browser.context.newPage();
    try {
      await page.goto(`${base}/login?return_to=%2Faccount%2Fconnections`);
      await expectUsable(page, [/^input: /, /^button: Sign in/]);
    } finally {
      await page.close();
      await context?.close();
    }
  });

  it('consent', async () => {
    const page = await browser.context.newPage();
    try {
      await page.goto(authorizeUrl('sandbox-partner', 'profile:read seatime:read vessels:read'));
      await signInIfAsked(page);
      await expectUsable(page, [/^button: Allow/, /^button: Deny/]);
    } finally {
      await page.close();
    }
  });

  it.each([
    ['an unknown partner (400)', () => `${base}/oauth/authorize?client_id=nobody&response_type=code`],
    ['a page that does not exist (404)', () => `${base}/account/nothing-here`],
  ])('error page: %s', async (_label, url) => {
    const page = await browser.context.newPage();
    try {
      const res = await page.goto(url());
      expect(res?.status()).toBeGreaterThanOrEqual(400);
      await expectUsable(page, []);
    } finally {
      await page.close();
    }
  });
});

import { buildOpenApiDocument } from '@svc/contracts';
import type { Page } from 'playwright-core';
import { launchBrowser, type Browser } from '../support/browser';
import { request } from '../support/http';
import { startSystem, type RunningSystem } from '../support/system';

/**
 * The documentation as a partner's developer opens it: Debian's Chromium on the gateway's /docs
 * pages and the Redoc API reference (bundled, no CDN). Any console error, failed request or
 * broken link fails the test.
 */
jest.setTimeout(120_000);

let system: RunningSystem;
let browser: Browser;
let origin: string;

beforeAll(async () => {
  // Only the gateway: the docs and the description are its own static files.
  system = await startSystem({ label: 'docs-browser', apps: [] });
  browser = await launchBrowser();
  // PUBLIC_BASE_URL's host, so links built from it and from DOCS_URL are same-origin.
  origin = `http://localhost:${system.gatewayPort}`;
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await system?.stop();
}, 60_000);

/**
 * Links that cannot be followed from a test machine without Internet access: Redoc's own
 * attribution in the reference's sidebar. Everything else must stay on this site.
 */
const EXTERNAL_ALLOWED = ['https://redocly.com/redoc/'];

const DOCUMENTED_PATHS = [
  /^\/$/,
  ...Object.keys(
    buildOpenApiDocument({ publicBaseUrl: 'http://x', docsUrl: 'http://x/docs' }).paths as object,
  ).map((path) => new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`)),
];

interface Visit {
  readonly page: Page;
  readonly errors: string[];
}

async function open(path: string, ready: (page: Page) => Promise<unknown>): Promise<Visit> {
  const page = await browser.context.newPage();
  const errors: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(`console: ${msg.text()}`);
  });
  page.on('pageerror', (err) => errors.push(`page error: ${err.message}`));
  page.on('requestfailed', (req) => errors.push(`request failed: ${req.url()} ${req.failure()?.errorText}`));
  page.on('response', (res) => {
    if (res.status() >= 400) errors.push(`${res.status()} for ${res.url()}`);
  });
  const res = await page.goto(`${origin}${path}`, { waitUntil: 'load' });
  expect(res?.status()).toBe(200);
  await ready(page);
  return { page, errors };
}

/** The status after same-site redirects (`/docs` → `/docs/`). */
async function finalStatus(url: string, hops = 3): Promise<number> {
  const res = await request(url);
  const location = res.header('location');
  if (res.status >= 300 && res.status < 400 && location && hops > 0) {
    return finalStatus(new URL(location, url).toString(), hops - 1);
  }
  return res.status;
}

/** Every link of the page resolves: same-origin pages answer 200, fragments name an element. */
async function expectNoBrokenLinks(page: Page): Promise<number> {
  const base = page.url();
  const hrefs = await page.$$eval('a[href]', (anchors) => anchors.map((a) => a.getAttribute('href') ?? ''));
  const links = hrefs.map((href) => new URL(href, base).toString());
  expect(links.length).toBeGreaterThan(0);
  const broken: string[] = [];
  const checked = new Map<string, number>();
  for (const href of new Set(links)) {
    const url = new URL(href);
    if (url.origin !== origin) {
      // Hosts under the reserved .example TLD (RFC 2606) appear in examples only.
      const illustrative = url.hostname.endsWith('.example');
      if (!illustrative && !EXTERNAL_ALLOWED.some((allowed) => href.startsWith(allowed)))
        broken.push(`external link ${href}`);
      continue;
    }
    // The reference shows API endpoints (authorization and token URLs, the server) as links: they
    // must be operations of the description; they are not pages to open.
    const docsPage = url.pathname === '/docs' || url.pathname.startsWith('/docs/');
    if (!docsPage && !['/openapi.json', '/openapi.yaml'].includes(url.pathname)) {
      if (!DOCUMENTED_PATHS.some((pattern) => pattern.test(url.pathname)))
        broken.push(`not an API path: ${href}`);
      continue;
    }
    const target = `${url.origin}${url.pathname}${url.search}`;
    if (!checked.has(target)) checked.set(target, await finalStatus(target));
    if (checked.get(target) !== 200) broken.push(`${href} → ${checked.get(target)}`);
    if (url.hash && target === base.split('#')[0]) {
      const id = decodeURIComponent(url.hash.slice(1));
      const found =
        (await page.locator(`[id=${JSON.stringify(id)}], [name=${JSON.stringify(id)}]`).count()) > 0;
      if (!found) broken.push(`${href}: no element #${id}`);
    }
  }
  expect(broken).toEqual([]);
  return checked.size;
}

describe('the documentation in a browser', () => {
  it('renders the API reference from /openapi.json with Redoc, without errors or broken links', async () => {
    // Rendered under the gateway's policy for the reference: script only from this site.
    const csp = (await request(`${origin}/docs/reference`)).header('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("frame-ancestors 'none'");
    const { page, errors } = await open('/docs/reference', (p) =>
      p.getByRole('heading', { name: 'Crew record service API' }).first().waitFor(),
    );
    // Operations, the webhooks section and the error table were rendered from the document.
    await page.getByText('The crew member’s profile and membership').first().waitFor({ state: 'attached' });
    await page.getByText('user.consent.revoked').first().waitFor({ state: 'attached' });
    expect(await page.content()).toContain(`${origin}/docs/errors/seat_quota_exceeded`);
    await expectNoBrokenLinks(page);
    expect(errors).toEqual([]);
  });

  it.each([
    ['/docs/quickstart', 'Quickstart: OAuth 2.0 with PKCE against the sandbox'],
    ['/docs/webhooks', 'Webhooks'],
    ['/docs/sponsorship', 'Sponsorship: seats, and reconciling them safely'],
    ['/docs/errors/invalid_token', 'invalid_token: Invalid or missing credentials'],
  ])('shows %s without errors or broken links', async (path, heading) => {
    // The guides run no script at all.
    const csp = (await request(`${origin}${path}`)).header('content-security-policy') ?? '';
    expect(csp).toMatch(/^default-src 'none';/);
    expect(csp).not.toContain('script-src');
    const { page, errors } = await open(path, (p) =>
      p.getByRole('heading', { level: 1, name: heading }).waitFor(),
    );
    // The environment's values are filled in: no placeholder is left.
    const html = await page.content();
    expect(html).not.toContain('@@');
    if (path === '/docs/quickstart') expect(html).toContain(`BASE_URL=${origin}`);
    expect(await expectNoBrokenLinks(page)).toBeGreaterThanOrEqual(3);
    expect(errors).toEqual([]);
  });
});

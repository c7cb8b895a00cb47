import {
  AUTH_CONSENTS_LIST,
  AUTH_MEMBER_ACCESS,
  CREW_MEMBER_EXPORT,
  SPONSORSHIP_MEMBER_SPONSORSHIPS,
} from '@svc/contracts';
import { DependencyUnavailableError } from '@svc/platform';
import { startTestApp, type TestApp } from '../../../../test/support/fake-consent-ui';

let t: TestApp;

const RECORD = {
  profile: {
    user_id: 'usr_alex',
    email: 'alex.morgan@sandbox.test',
    name: 'Alex Morgan',
    role: 'Chief Officer',
    country: 'GB',
    membership: { tier: 'premium' as const, source: 'sponsored' as const, since: '2026-01-01T00:00:00.000Z' },
    record_updated_at: '2026-03-01T00:00:00.000Z',
  },
  sea_time: [
    {
      date: '2026-02-01',
      days_at_sea: 20,
      nautical_miles: 3000,
      role: 'Chief Officer',
      verified: true,
      recorded_at: '2026-02-02T00:00:00.000Z',
    },
  ],
  vessels: [],
};

beforeEach(async () => {
  t = await startTestApp();
  t.rpc.on(AUTH_CONSENTS_LIST, () => ({ connections: [] }));
  t.rpc.on(AUTH_MEMBER_ACCESS, () => ({
    consents: [
      {
        client_id: 'sandbox-partner',
        client_name: 'Sandbox Partner',
        scopes: ['profile:read'],
        granted_at: '2026-01-05T10:00:00.000Z',
        revoked_at: '2026-02-05T10:00:00.000Z',
      },
    ],
    reads: [
      {
        client_id: 'sandbox-partner',
        scope: 'profile:read' as const,
        day: '2026-01-06',
        count: 3,
        last_at: '2026-01-06T09:00:00.000Z',
      },
    ],
    partners: [{ client_id: 'sandbox-partner', client_name: 'Sandbox Partner' }],
  }));
  t.rpc.on(CREW_MEMBER_EXPORT, () => RECORD);
  t.rpc.on(SPONSORSHIP_MEMBER_SPONSORSHIPS, () => ({ sponsorships: [] }));
});
afterEach(() => t.close());

/** The signed-in member's cookie and the link the connections page gives them. */
async function signedInLink(): Promise<{ cookie: string; href: string }> {
  const { cookie } = await t.signIn('usr_alex');
  const page = await t.app.inject({ method: 'GET', url: '/account/connections', headers: { cookie } });
  const href = /<a href="([^"]+)" download>Download my data<\/a>/.exec(page.body)?.[1];
  if (!href) throw new Error('no "Download my data" link on the connections page');
  return { cookie, href: href.replace(/&amp;/g, '&') };
}

function get(url: string, headers: Record<string, string>) {
  return t.app.inject({ method: 'GET', url, headers });
}

describe('GET /account/export ("Download my data")', () => {
  it("downloads a JSON attachment of the member's data, never cached", async () => {
    const { cookie, href } = await signedInLink();
    const response = await get(href, { cookie, 'sec-fetch-site': 'same-origin' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.headers['content-disposition']).toMatch(
      /^attachment; filename="crew-record-\d{4}-\d{2}-\d{2}\.json"$/,
    );
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    const body = JSON.parse(response.body) as Record<string, unknown>;
    for (const key of ['profile', 'sea_time', 'vessels', 'connections', 'access_history', 'sponsorships']) {
      expect(body).toHaveProperty(key);
    }
    expect(body.profile).toEqual(RECORD.profile);
    expect(body.sea_time).toEqual(RECORD.sea_time);
    expect(body.connections).toEqual([
      {
        partner: 'Sandbox Partner',
        client_id: 'sandbox-partner',
        scopes: ['profile:read'],
        granted_at: '2026-01-05T10:00:00.000Z',
        revoked_at: '2026-02-05T10:00:00.000Z',
      },
    ]);
    expect(body.access_history).toEqual([
      {
        partner: 'Sandbox Partner',
        client_id: 'sandbox-partner',
        day: '2026-01-06',
        scope: 'profile:read',
        reads: 3,
        last_read_at: '2026-01-06T09:00:00.000Z',
      },
    ]);
    // Asked for the signed-in member only.
    expect(t.rpc.callsOf(CREW_MEMBER_EXPORT)).toEqual([{ user_id: 'usr_alex' }]);
  });

  it.each([
    ['none (typed or bookmarked)', 'none'],
    ['no Sec-Fetch-Site header (older browsers)', undefined],
  ])('downloads with the link token when the request says %s', async (_label, site) => {
    const { cookie, href } = await signedInLink();
    const response = await get(href, { cookie, ...(site ? { 'sec-fetch-site': site } : {}) });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-disposition']).toMatch(/^attachment;/);
  });

  it('sends a browser without a session to sign in, and gives nothing', async () => {
    const { href } = await signedInLink();
    const response = await get(href, { 'sec-fetch-site': 'same-origin' });
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe('/login?return_to=%2Faccount%2Fconnections');
    expect(response.headers['content-disposition']).toBeUndefined();
    expect(t.rpc.callsOf(CREW_MEMBER_EXPORT)).toEqual([]);
  });

  it.each([
    ['cross-site (SameSite=Lax sends the cookie on a top-level GET)', 'cross-site'],
    ['same-site, from another origin of the site', 'same-site'],
  ])('refuses a request started %s, even with the right token', async (_label, site) => {
    const { cookie, href } = await signedInLink();
    const response = await get(href, { cookie, 'sec-fetch-site': site });
    expect(response.statusCode).toBe(403);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.headers['content-disposition']).toBeUndefined();
    expect(response.body).toContain('Download not started');
    expect(response.body).not.toContain('alex.morgan@sandbox.test');
    expect(t.rpc.callsOf(CREW_MEMBER_EXPORT)).toEqual([]);
  });

  it.each([
    ['without the link token', (_href: string) => '/account/export'],
    ['with a wrong token', (_href: string) => `/account/export?token=${'0'.repeat(64)}`],
    ['with the token twice', (href: string) => `${href}&token=x`],
  ])('refuses a request %s (a browser that sends no Sec-Fetch-Site)', async (_label, url) => {
    const { cookie, href } = await signedInLink();
    const response = await get(url(href), { cookie });
    expect(response.statusCode).toBe(403);
    expect(response.headers['content-disposition']).toBeUndefined();
    expect(t.rpc.callsOf(CREW_MEMBER_EXPORT)).toEqual([]);
  });

  it("refuses another session's link", async () => {
    const { href } = await signedInLink();
    const other = await t.signIn('usr_alex');
    const response = await get(href, { cookie: other.cookie, 'sec-fetch-site': 'same-origin' });
    expect(response.statusCode).toBe(403);
  });

  it('answers 503 with a page, not a partial file, when a part cannot be gathered', async () => {
    t.rpc.failWith(CREW_MEMBER_EXPORT, new DependencyUnavailableError('rpc.crew-api'));
    const { cookie, href } = await signedInLink();
    const response = await get(href, { cookie, 'sec-fetch-site': 'same-origin' });
    expect(response.statusCode).toBe(503);
    expect(response.headers['content-disposition']).toBeUndefined();
    expect(response.headers['cache-control']).toBe('no-store');
  });
});

import { SANDBOX_MEMBERS } from '@svc/contracts';
import { partner } from '../support/factories';
import { createUser } from '../support/app-factories';
import { useCrewApi } from '../support/starters/crew-api';
import { expectProblem } from '../support/http';
import { accessToken } from '../support/oauth/flow';

/**
 * The four crew-data records of docs/rules.md (Resources) and docs/rules.md (Crew records), read
 * from the seeded sandbox members with tokens of the real auth-server: every field and its type,
 * the membership block's visibility, scopes and challenges (RFC 6750 §3.1), and the 404 of a
 * member without a crew record.
 */
jest.setTimeout(30_000);

const { auth, crew } = useCrewApi();
const [alex, sam, jo] = SANDBOX_MEMBERS;
const ENDPOINTS = ['/v1/me', '/v1/me/sea-time', '/v1/me/sea-time/recent', '/v1/me/vessels'] as const;
/** One token per member, all three scopes, from sandbox-partner (alex.morgan's sponsor). */
const tokens = new Map<string, string>();

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

beforeAll(async () => {
  for (const m of [alex, sam, jo]) tokens.set(m.user_id, await accessToken(auth, m));
}, 60_000);

const tokenOf = (m: { user_id: string }) => tokens.get(m.user_id)!;

async function getJson<T = Record<string, unknown>>(path: string, token: string): Promise<T> {
  const res = await crew.get(path, token);
  expect({ path, status: res.status, body: res.text.slice(0, 300) }).toMatchObject({ status: 200 });
  expect(res.header('content-type')).toMatch(/^application\/json/);
  expect(res.header('cache-control')).toBe('private, no-cache');
  return res.json<T>();
}

function expectTimestamp(value: unknown): void {
  expect(value).toEqual(expect.stringMatching(ISO_UTC));
  expect(new Date(value as string).toISOString()).toBe(value);
}

function expectCount(value: unknown): void {
  expect(Number.isInteger(value)).toBe(true);
  expect(value as number).toBeGreaterThanOrEqual(0);
}

function currentMonths(now = new Date()): string[] {
  return Array.from({ length: 12 }, (_, i) =>
    new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 11 + i, 1)).toISOString().slice(0, 7),
  );
}

describe('GET /v1/me (profile:read)', () => {
  it("shows alex.morgan's profile with exactly the fields of docs/rules.md", async () => {
    const body = await getJson('/v1/me', tokenOf(alex));
    expect(Object.keys(body).sort()).toEqual(
      ['country', 'membership', 'name', 'photo_url', 'record_updated_at', 'role', 'user_id'].sort(),
    );
    expect(body.user_id).toBe(alex.user_id);
    expect(body.name).toBe('Alex Morgan');
    expect(body.role).toBe('Chief Officer');
    expect(typeof body.country).toBe('string');
    expect(new URL(body.photo_url as string).protocol).toBe('https:');
    expectTimestamp(body.record_updated_at);
  });

  it('shows the sponsor (sandbox-partner) the term and sponsored_by_you', async () => {
    const { membership } = await getJson<{ membership: Record<string, unknown> }>('/v1/me', tokenOf(alex));
    expect(Object.keys(membership).sort()).toEqual(
      ['expires_at', 'since', 'source', 'sponsored_by_you', 'tier'].sort(),
    );
    expect(membership).toMatchObject({ tier: 'premium', source: 'sponsored', sponsored_by_you: true });
    expectTimestamp(membership.since);
    expectTimestamp(membership.expires_at);
    expect(Date.parse(membership.expires_at as string)).toBeGreaterThan(Date.now());
  });

  it('hides the term and sponsored_by_you from a partner that is not the sponsor', async () => {
    const token = await accessToken(auth, alex, {
      partner: partner('sandbox-partner-b'),
      scope: 'profile:read',
    });
    const { membership } = await getJson<{ membership: Record<string, unknown> }>('/v1/me', token);
    expect(Object.keys(membership).sort()).toEqual(['since', 'source', 'tier']);
    expect(membership).toMatchObject({ tier: 'premium', source: 'sponsored' });
  });

  it('always has the membership block: self-paid premium (sam.lee) and free (jo.kim)', async () => {
    const samBody = await getJson<{ membership: Record<string, unknown>; photo_url: unknown }>(
      '/v1/me',
      tokenOf(sam),
    );
    expect(Object.keys(samBody.membership).sort()).toEqual(['since', 'source', 'tier']);
    expect(samBody.membership).toMatchObject({ tier: 'premium', source: 'self' });
    expect(samBody.photo_url).toBeNull();
    const joBody = await getJson<{ membership: Record<string, unknown> }>('/v1/me', tokenOf(jo));
    expect(joBody.membership).toMatchObject({ tier: 'free', source: 'self' });
    expectTimestamp(joBody.membership.since);
  });
});

describe('GET /v1/me/sea-time (seatime:read)', () => {
  it("shows alex.morgan's totals, verified subset and days by role", async () => {
    const body = await getJson<Record<string, unknown>>('/v1/me/sea-time', tokenOf(alex));
    expect(Object.keys(body).sort()).toEqual([
      'by_role',
      'record_updated_at',
      'totals',
      'user_id',
      'verified',
    ]);
    expect(body.user_id).toBe(alex.user_id);
    expectTimestamp(body.record_updated_at);
    const totals = body.totals as Record<string, number>;
    expect(Object.keys(totals).sort()).toEqual([
      'days_at_sea',
      'nautical_miles',
      'vessels_served',
      'years_active',
    ]);
    for (const f of ['days_at_sea', 'nautical_miles', 'vessels_served'] as const) expectCount(totals[f]);
    expect(typeof totals.years_active).toBe('number');
    // At most two decimals. Compared as the shortest decimal text, not as `x * 100`, which is not an
    // integer in floating point for values like 16.15 (1614.9999999999998).
    expect(Number(totals.years_active.toFixed(2))).toBe(totals.years_active);
    expect(totals.years_active).toBeGreaterThan(5);
    expect(totals.vessels_served).toBeGreaterThanOrEqual(8);
    expect(totals.days_at_sea).toBeGreaterThan(1000);
    const verified = body.verified as Record<string, number>;
    expect(Object.keys(verified).sort()).toEqual(['days_at_sea', 'nautical_miles']);
    expectCount(verified.days_at_sea);
    expectCount(verified.nautical_miles);
    expect(verified.days_at_sea).toBeGreaterThan(0);
    expect(verified.days_at_sea).toBeLessThan(totals.days_at_sea);
    expect(verified.nautical_miles).toBeLessThan(totals.nautical_miles);
    const byRole = body.by_role as { role: string; days: number }[];
    expect(byRole.length).toBeGreaterThanOrEqual(3);
    for (const item of byRole) {
      expect(Object.keys(item).sort()).toEqual(['days', 'role']);
      expect(typeof item.role).toBe('string');
      expectCount(item.days);
    }
    expect(byRole.reduce((n, r) => n + r.days, 0)).toBe(totals.days_at_sea);
  });

  it('shows an empty record as zeros, with by_role empty (jo.kim)', async () => {
    const body = await getJson('/v1/me/sea-time', tokenOf(jo));
    expect(body).toMatchObject({
      user_id: jo.user_id,
      totals: { days_at_sea: 0, nautical_miles: 0, vessels_served: 0, years_active: 0 },
      verified: { days_at_sea: 0, nautical_miles: 0 },
      by_role: [],
    });
  });
});

describe('GET /v1/me/sea-time/recent (seatime:read)', () => {
  it('has exactly the 12 UTC months ending with this one, oldest first (alex.morgan: most with sea time)', async () => {
    const body = await getJson<{ months: Record<string, unknown>[] } & Record<string, unknown>>(
      '/v1/me/sea-time/recent',
      tokenOf(alex),
    );
    expect(Object.keys(body).sort()).toEqual(['months', 'record_updated_at', 'user_id']);
    expect(body.user_id).toBe(alex.user_id);
    expectTimestamp(body.record_updated_at);
    expect(body.months.map((m) => m.month)).toEqual(currentMonths());
    for (const m of body.months) {
      expect(Object.keys(m).sort()).toEqual(['days_at_sea', 'month', 'nautical_miles']);
      expectCount(m.days_at_sea);
      expectCount(m.nautical_miles);
    }
    expect(body.months.filter((m) => (m.days_at_sea as number) > 0).length).toBeGreaterThanOrEqual(7);
  });

  it('carries zeros for months without data (jo.kim)', async () => {
    const body = await getJson<{ months: Record<string, unknown>[] }>('/v1/me/sea-time/recent', tokenOf(jo));
    expect(body.months).toEqual(
      currentMonths().map((month) => ({ month, days_at_sea: 0, nautical_miles: 0 })),
    );
  });
});

describe('GET /v1/me/vessels (vessels:read)', () => {
  interface Page {
    user_id: string;
    record_updated_at: string;
    vessels: Record<string, unknown>[];
    next_cursor: string | null;
  }

  it('pages 50 periods by default, newest first, each with every field', async () => {
    const page = await getJson<Page>('/v1/me/vessels', tokenOf(alex));
    expect(Object.keys(page).sort()).toEqual(['next_cursor', 'record_updated_at', 'user_id', 'vessels']);
    expect(page.user_id).toBe(alex.user_id);
    expectTimestamp(page.record_updated_at);
    expect(page.vessels).toHaveLength(50);
    expect(typeof page.next_cursor).toBe('string');
    for (const v of page.vessels) {
      expect(Object.keys(v).sort()).toEqual(
        ['days', 'id', 'imo', 'name', 'nautical_miles', 'period_end', 'period_start', 'role'].sort(),
      );
      expect(v.id).toEqual(expect.stringMatching(/^vp_[A-Za-z0-9_-]+$/));
      expect(v.imo).toEqual(expect.stringMatching(/^\d{7}$/));
      expect(typeof v.name).toBe('string');
      expect(typeof v.role).toBe('string');
      expectTimestamp(v.period_start);
      expectTimestamp(v.period_end);
      expect(Date.parse(v.period_end as string)).toBeGreaterThanOrEqual(Date.parse(v.period_start as string));
      expectCount(v.days);
      expectCount(v.nautical_miles);
    }
    const starts = page.vessels.map((v) => Date.parse(v.period_start as string));
    expect([...starts].sort((a, b) => b - a)).toEqual(starts);
  });

  it('has 120 periods on at least 8 vessels in 3 or more roles (alex.morgan)', async () => {
    const all: Record<string, unknown>[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `?limit=200&cursor=${encodeURIComponent(cursor)}` : '?limit=200';
      const page: Page = await getJson<Page>(`/v1/me/vessels${query}`, tokenOf(alex));
      all.push(...page.vessels);
      cursor = page.next_cursor;
    } while (cursor);
    expect(all).toHaveLength(120);
    expect(new Set(all.map((v) => v.id)).size).toBe(120);
    expect(new Set(all.map((v) => v.imo)).size).toBeGreaterThanOrEqual(8);
    expect(new Set(all.map((v) => v.role)).size).toBeGreaterThanOrEqual(3);
  });

  it('shows sam.lee 3 periods and jo.kim none, with next_cursor null', async () => {
    const samPage = await getJson<Page>('/v1/me/vessels', tokenOf(sam));
    expect(samPage.vessels).toHaveLength(3);
    expect(samPage.next_cursor).toBeNull();
    const joPage = await getJson<Page>('/v1/me/vessels', tokenOf(jo));
    expect(joPage).toMatchObject({ user_id: jo.user_id, vessels: [], next_cursor: null });
  });
});

describe('scopes and credentials (RFC 6750 §3.1, docs/rules.md)', () => {
  it.each([
    ['/v1/me', 'seatime:read vessels:read', 'profile:read'],
    ['/v1/me/sea-time', 'profile:read vessels:read', 'seatime:read'],
    ['/v1/me/sea-time/recent', 'profile:read', 'seatime:read'],
    ['/v1/me/vessels', 'profile:read seatime:read', 'vessels:read'],
  ])('%s with scopes "%s" → 403 insufficient_scope naming %s', async (path, granted, needed) => {
    const token = await accessToken(auth, alex, { scope: granted });
    const res = await crew.get(path, token);
    expectProblem(res, 403, 'insufficient_scope');
    expect(res.header('www-authenticate')).toBe(`Bearer error="insufficient_scope", scope="${needed}"`);
  });

  it.each(ENDPOINTS)('%s without credentials → 401 with a bare Bearer challenge', async (path) => {
    const res = await crew.get(path, undefined);
    expectProblem(res, 401, 'invalid_token');
    expect(res.header('www-authenticate')).toBe('Bearer');
  });

  it.each(ENDPOINTS)('%s with an unknown token → 401 error="invalid_token"', async (path) => {
    const res = await crew.get(path, 'not-a-token-this-service-issued');
    expectProblem(res, 401, 'invalid_token');
    expect(res.header('www-authenticate')).toBe('Bearer error="invalid_token"');
  });

  it.each(ENDPOINTS)('%s for a member without a crew record → 404 not_found', async (path) => {
    const member = await createUser(auth);
    const res = await crew.get(path, await accessToken(auth, member));
    expectProblem(res, 404, 'not_found');
  });
});

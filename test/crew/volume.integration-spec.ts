import {
  addSeaTimeEntries,
  addVesselPeriods,
  createCrewMember,
  databaseToday,
  type FactoryEntry,
  type FactoryPeriod,
} from '../support/app-factories';
import { useCrewApi } from '../support/starters/crew-api';
import { accessToken } from '../support/oauth/flow';

/**
 * A member with 5,000 vessel periods and 5,000 sea-time entries (written with one INSERT …
 * SELECT generate_series each): the totals, days by role, the 12-month trend and the vessel
 * pages equal what this test computes on its own from the same rows. How fast that is, is for
 * the benchmark (`npm run bench -- crew`), not for a test.
 */
jest.setTimeout(60_000);

const { auth, crew } = useCrewApi();
let token: string;
let today: string;
let periods: FactoryPeriod[];
let entries: FactoryEntry[];

const COUNT = 5000;
const DAY_MS = 86_400_000;

beforeAll(async () => {
  const member = await createCrewMember(auth, crew);
  today = await databaseToday(crew.db);
  periods = await addVesselPeriods(crew.db, member.user_id, COUNT, { vessels: 8 });
  entries = await addSeaTimeEntries(crew.db, member.user_id, COUNT, today);
  token = await accessToken(auth, member);
}, 60_000);

const sum = (values: readonly number[]) => values.reduce((n, v) => n + v, 0);

function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

it('totals, verified subset, vessels served, years active and days by role', async () => {
  const res = await crew.get('/v1/me/sea-time', token);
  expect(res.status).toBe(200);
  const verified = entries.filter((e) => e.verified);
  const dates = entries.map((e) => Date.parse(`${e.date}T00:00:00Z`));
  const spanDays = (Math.max(...dates) - Math.min(...dates)) / DAY_MS + 1;
  const roles = new Map<string, number>();
  for (const e of entries) roles.set(e.role, (roles.get(e.role) ?? 0) + e.days_at_sea);
  const byRole = [...roles]
    .map(([role, days]) => ({ role, days }))
    .sort((a, b) => b.days - a.days || byteOrder(a.role, b.role));
  expect(res.json()).toMatchObject({
    totals: {
      days_at_sea: sum(entries.map((e) => e.days_at_sea)),
      nautical_miles: sum(entries.map((e) => e.nautical_miles)),
      vessels_served: new Set(periods.map((p) => p.imo)).size,
      // 2 decimals of span / 365.25 (span × 400 / 1,461 hundredths, exactly).
      years_active: Math.round((spanDays * 400) / 1461) / 100,
    },
    verified: {
      days_at_sea: sum(verified.map((e) => e.days_at_sea)),
      nautical_miles: sum(verified.map((e) => e.nautical_miles)),
    },
    by_role: byRole,
  });
  expect(res.json<{ totals: { vessels_served: number } }>().totals.vessels_served).toBe(8);
});

it('the 12-month trend', async () => {
  const res = await crew.get('/v1/me/sea-time/recent', token);
  expect(res.status).toBe(200);
  const [y, m] = today.split('-').map(Number);
  const months = Array.from({ length: 12 }, (_, i) =>
    new Date(Date.UTC(y, m - 12 + i, 1)).toISOString().slice(0, 7),
  );
  const expected = months.map((month) => {
    const of = entries.filter((e) => e.date.startsWith(month));
    return {
      month,
      days_at_sea: sum(of.map((e) => e.days_at_sea)),
      nautical_miles: sum(of.map((e) => e.nautical_miles)),
    };
  });
  expect(res.json<{ months: unknown[] }>().months).toEqual(expected);
});

it('the first page, and a scan of all 5,000 by 200', async () => {
  const expected = [...periods].sort((a, b) =>
    a.period_start === b.period_start
      ? byteOrder(b.id, a.id)
      : Date.parse(b.period_start) - Date.parse(a.period_start),
  );
  const first = await crew.get('/v1/me/vessels', token);
  expect(first.status).toBe(200);
  const page = first.json<{ vessels: FactoryPeriod[]; next_cursor: string | null }>();
  expect(page.vessels).toEqual(expected.slice(0, 50));
  expect(typeof page.next_cursor).toBe('string');

  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const res = await crew.get(
      `/v1/me/vessels?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      token,
    );
    const body = res.json<{ vessels: FactoryPeriod[]; next_cursor: string | null }>();
    ids.push(...body.vessels.map((v) => v.id));
    cursor = body.next_cursor;
  } while (cursor);
  expect(ids).toEqual(expected.map((p) => p.id));
});

import {
  addSeaTimeEntries,
  addVesselPeriods,
  createCrewMember,
  databaseToday,
} from '../support/app-factories';
import { accessToken } from '../support/oauth/flow';
import { keepingReplicas } from '../support/starters/crew-api';

/**
 * The sea-time answers a replica keeps by record version (SeaTimeCache), and the reads as of a
 * version behind them, against real PostgreSQL, Redis and RabbitMQ: two crew-api replicas on one
 * database, one keeping answers and one aggregating every answer (SEA_TIME_CACHE_ENTRIES=0), asked
 * the same things around writes made through the internal records API. Every answer of the first
 * must be the second's, byte for byte, validators included, and show every write made before it.
 */
jest.setTimeout(60_000);

const replicas = keepingReplicas('SEA_TIME_CACHE_ENTRIES');
const { both } = replicas;

interface Totals {
  record_updated_at: string;
  totals: { days_at_sea: number; nautical_miles: number; vessels_served: number; years_active: number };
  verified: { days_at_sea: number; nautical_miles: number };
  by_role: { role: string; days: number }[];
}
interface Trend {
  record_updated_at: string;
  months: { month: string; days_at_sea: number; nautical_miles: number }[];
}

async function addEntry(userId: string, date: string, days: number, role = 'Master'): Promise<void> {
  const res = await replicas.keeping.internal('POST', `/internal/v1/crew/${userId}/sea-time-entries`, {
    date,
    days_at_sea: days,
    nautical_miles: days * 100,
    role,
    verified: false,
  });
  expect(res.status).toBe(201);
}

it('answers as the database does, before and after entries, periods and a profile change', async () => {
  const member = await createCrewMember(replicas.auth, replicas.keeping);
  const today = await databaseToday(replicas.keeping.db);
  await addSeaTimeEntries(replicas.keeping.db, member.user_id, 40, today);
  await addVesselPeriods(replicas.keeping.db, member.user_id, 3);
  const token = await accessToken(replicas.auth, member);

  const before = (await both('/v1/me/sea-time', token)).json<Totals>();
  const trendBefore = (await both('/v1/me/sea-time/recent', token)).json<Trend>();
  expect((await both('/v1/me/sea-time', token)).json<Totals>()).toEqual(before); // kept, now

  await addEntry(member.user_id, today, 7, 'Bosun');
  const after = (await both('/v1/me/sea-time', token)).json<Totals>();
  expect(after.totals.days_at_sea).toBe(before.totals.days_at_sea + 7);
  expect(after.verified).toEqual(before.verified);
  expect(after.by_role).toContainEqual({ role: 'Bosun', days: 7 });
  expect(after.record_updated_at).not.toBe(before.record_updated_at);
  const trendAfter = (await both('/v1/me/sea-time/recent', token)).json<Trend>();
  const thisMonth = today.slice(0, 7);
  const month = (t: Trend) => t.months.find((m) => m.month === thisMonth)!.days_at_sea;
  expect(month(trendAfter)).toBe(month(trendBefore) + 7);

  const period = await replicas.keeping.internal(
    'POST',
    `/internal/v1/crew/${member.user_id}/vessel-periods`,
    {
      imo: '9074729', // a vessel the factory's three periods (IMOs 2-4 of its list) did not use
      name: 'Northern Tern',
      role: 'Master',
      period_start: '2026-02-01T00:00:00Z',
      period_end: '2026-02-20T00:00:00Z',
      nautical_miles: 2100,
    },
  );
  expect(period.status).toBe(201);
  const served = (await both('/v1/me/sea-time', token)).json<Totals>();
  expect(served.totals.vessels_served).toBe(after.totals.vessels_served + 1);

  const renamed = await replicas.keeping.internal('PATCH', `/internal/v1/crew/${member.user_id}/profile`, {
    name: 'Renamed Member',
  });
  expect(renamed.status).toBe(200);
  const profiled = (await both('/v1/me/sea-time', token)).json<Totals>();
  expect(profiled.totals).toEqual(served.totals);
  expect(profiled.record_updated_at).not.toBe(served.record_updated_at);
});

it("revalidates exactly across replicas: one replica's ETag is the other's, until a write", async () => {
  const member = await createCrewMember(replicas.auth, replicas.keeping);
  const today = await databaseToday(replicas.keeping.db);
  await addSeaTimeEntries(replicas.keeping.db, member.user_id, 12, today);
  const token = await accessToken(replicas.auth, member);
  for (const path of ['/v1/me/sea-time', '/v1/me/sea-time/recent']) {
    const first = await replicas.keeping.get(path, token);
    const etag = first.header('etag')!;
    const notModified = await both(path, token, { 'if-none-match': etag });
    expect(notModified.status).toBe(304);
    expect(notModified.text).toBe('');
    expect(notModified.header('last-modified')).toBe(first.header('last-modified'));
  }
  const etags = await Promise.all(
    ['/v1/me/sea-time', '/v1/me/sea-time/recent'].map(async (p) =>
      (await replicas.reading.get(p, token)).header('etag')!,
    ),
  );

  await addEntry(member.user_id, today, 2);
  for (const [i, path] of ['/v1/me/sea-time', '/v1/me/sea-time/recent'].entries()) {
    const changed = await both(path, token, { 'if-none-match': etags[i] });
    expect(changed.status).toBe(200);
    expect(changed.header('etag')).not.toBe(etags[i]);
  }
});

it('answers concurrent reads around a write with matching validators and bodies', async () => {
  const member = await createCrewMember(replicas.auth, replicas.keeping);
  const today = await databaseToday(replicas.keeping.db);
  await addSeaTimeEntries(replicas.keeping.db, member.user_id, 20, today);
  const token = await accessToken(replicas.auth, member);
  const reads = () =>
    Promise.all(Array.from({ length: 10 }, () => replicas.keeping.get('/v1/me/sea-time', token)));
  const [during] = await Promise.all([reads(), addEntry(member.user_id, today, 5)]);
  const settled = await reads();
  // One ETag, one body, whichever version each read saw.
  const byEtag = new Map<string, string>();
  for (const res of [...during, ...settled]) {
    expect(res.status).toBe(200);
    const seen = byEtag.get(res.header('etag')!);
    if (seen !== undefined) expect(res.text).toBe(seen);
    byEtag.set(res.header('etag')!, res.text);
  }
  const latest = settled[0].json<Totals>();
  expect(new Set(settled.map((r) => r.header('etag'))).size).toBe(1);
  expect((await replicas.reading.get('/v1/me/sea-time', token)).json<Totals>()).toEqual(latest);
});

import type { HttpResponse } from '../support/http';
import { addVesselPeriods, createCrewMember } from '../support/factories/crew';
import { startAuthServer, type AuthServerHarness } from '../support/starters/auth-server';
import { startCrewApi, type CrewApiHarness } from '../support/starters/crew-api';
import { accessToken } from '../support/oauth/tokens';

/**
 * The vessel-history pages a replica keeps (VesselPageCache) against real PostgreSQL, Redis and
 * RabbitMQ: two crew-api replicas on one database, one keeping pages and one reading every page
 * from the database (VESSEL_PAGE_CACHE_ENTRIES=0), asked the same things around writes made
 * through the internal records API. Every answer of the first must be the second's, byte for
 * byte, ETag included: a kept page is never stale, on either replica, whatever was written.
 */
jest.setTimeout(60_000);

let auth: AuthServerHarness;
let keeping: CrewApiHarness;
let reading: CrewApiHarness;

beforeAll(async () => {
  auth = await startAuthServer();
  keeping = await startCrewApi(auth, { VESSEL_PAGE_CACHE_ENTRIES: '50' });
  reading = await startCrewApi(auth, { VESSEL_PAGE_CACHE_ENTRIES: '0' });
}, 90_000);

afterAll(async () => {
  await keeping?.close();
  await reading?.close();
  await auth?.close();
});

interface Page {
  vessels: { id: string; name: string }[];
  next_cursor: string | null;
  record_updated_at: string;
}

/** Both replicas' answers to one request, checked equal; the keeping replica's is returned. */
async function both(
  path: string,
  token: string,
  headers: Record<string, string> = {},
): Promise<HttpResponse> {
  const [a, b] = [await keeping.get(path, token, headers), await reading.get(path, token, headers)];
  const seen = (r: HttpResponse) => ({
    status: r.status,
    etag: r.header('etag'),
    lastModified: r.header('last-modified'),
    body: r.text,
  });
  expect(seen(a)).toEqual(seen(b));
  return a;
}

const page = (cursor: string | null, limit = 3) =>
  `/v1/me/vessels?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;

async function scan(token: string, limit = 3): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const res = await both(page(cursor, limit), token);
    expect(res.status).toBe(200);
    const body = res.json<Page>();
    ids.push(...body.vessels.map((v) => v.id));
    cursor = body.next_cursor;
  } while (cursor);
  return ids;
}

async function addPeriod(userId: string, start: string): Promise<string> {
  const res = await keeping.internal('POST', `/internal/v1/crew/${userId}/vessel-periods`, {
    imo: '9074729',
    name: 'Nordic Aurora',
    role: 'Master',
    period_start: start,
    period_end: start.replace('-01T', '-20T'),
    nautical_miles: 4200,
  });
  expect(res.status).toBe(201);
  return res.json<{ id: string }>().id;
}

it('serves the same pages as the database, before and after periods are added and amended', async () => {
  const member = await createCrewMember(auth, keeping);
  await addVesselPeriods(keeping.db, member.user_id, 8);
  const token = await accessToken(auth, member);

  const before = await scan(token);
  expect(before).toHaveLength(8);
  expect(await scan(token)).toEqual(before); // the second scan is served from kept pages

  const added = await addPeriod(member.user_id, '2026-03-01T00:00:00Z');
  const after = await scan(token);
  expect(after).toEqual([added, ...before]);

  const amended = await keeping.internal(
    'PATCH',
    `/internal/v1/crew/${member.user_id}/vessel-periods/${added}`,
    {
      name: 'Nordic Aurora II',
    },
  );
  expect(amended.status).toBe(200);
  const first = (await both(page(null), token)).json<Page>();
  expect(first.vessels[0]).toMatchObject({ id: added, name: 'Nordic Aurora II' });
});

it('keeps a scan begun before a write on its snapshot, on both replicas', async () => {
  const member = await createCrewMember(auth, keeping);
  await addVesselPeriods(keeping.db, member.user_id, 7);
  const token = await accessToken(auth, member);
  const first = (await both(page(null), token)).json<Page>();
  const second = (await both(page(first.next_cursor), token)).json<Page>();

  await addPeriod(member.user_id, '2026-04-01T00:00:00Z');
  // The scan in progress goes on in its snapshot: the same second page, and no new period.
  expect((await both(page(first.next_cursor), token)).json<Page>()).toEqual(second);
  const third = (await both(page(second.next_cursor), token)).json<Page>();
  expect([...first.vessels, ...second.vessels, ...third.vessels]).toHaveLength(7);
  expect(third.record_updated_at).toBe(first.record_updated_at);
  // A new scan starts from the new snapshot.
  const fresh = (await both(page(null), token)).json<Page>();
  expect(fresh.record_updated_at).not.toBe(first.record_updated_at);
});

it("revalidates exactly across replicas: one replica's ETag is the other's, until a write", async () => {
  const member = await createCrewMember(auth, keeping);
  await addVesselPeriods(keeping.db, member.user_id, 5);
  const token = await accessToken(auth, member);
  const etag = (await keeping.get(page(null), token)).header('etag')!;
  expect((await both(page(null), token, { 'if-none-match': etag })).status).toBe(304);

  await addPeriod(member.user_id, '2026-05-01T00:00:00Z');
  const changed = await both(page(null), token, { 'if-none-match': etag });
  expect(changed.status).toBe(200);
  expect(changed.header('etag')).not.toBe(etag);
});

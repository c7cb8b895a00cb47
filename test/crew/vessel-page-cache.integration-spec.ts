import { addVesselPeriods, createCrewMember } from '../support/app-factories';
import { accessToken } from '../support/oauth/flow';
import { keepingReplicas } from '../support/starters/crew-api';

/**
 * The vessel-history pages a replica keeps (VesselPageCache) against real PostgreSQL, Redis and
 * RabbitMQ: two crew-api replicas on one database, one keeping pages and one reading every page
 * from the database (VESSEL_PAGE_CACHE_ENTRIES=0), asked the same things around writes made
 * through the internal records API. Every answer of the first must be the second's, byte for
 * byte, ETag included: a kept page is never stale, on either replica, whatever was written.
 */
jest.setTimeout(60_000);

const replicas = keepingReplicas('VESSEL_PAGE_CACHE_ENTRIES');
const { both } = replicas;

interface Page {
  vessels: { id: string; name: string }[];
  next_cursor: string | null;
  record_updated_at: string;
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
  const res = await replicas.keeping.internal('POST', `/internal/v1/crew/${userId}/vessel-periods`, {
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
  const member = await createCrewMember(replicas.auth, replicas.keeping);
  await addVesselPeriods(replicas.keeping.db, member.user_id, 8);
  const token = await accessToken(replicas.auth, member);

  const before = await scan(token);
  expect(before).toHaveLength(8);
  expect(await scan(token)).toEqual(before); // the second scan is served from kept pages

  const added = await addPeriod(member.user_id, '2026-03-01T00:00:00Z');
  const after = await scan(token);
  expect(after).toEqual([added, ...before]);

  const amended = await replicas.keeping.internal(
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
  const member = await createCrewMember(replicas.auth, replicas.keeping);
  await addVesselPeriods(replicas.keeping.db, member.user_id, 7);
  const token = await accessToken(replicas.auth, member);
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
  const member = await createCrewMember(replicas.auth, replicas.keeping);
  await addVesselPeriods(replicas.keeping.db, member.user_id, 5);
  const token = await accessToken(replicas.auth, member);
  const etag = (await replicas.keeping.get(page(null), token)).header('etag')!;
  expect((await both(page(null), token, { 'if-none-match': etag })).status).toBe(304);

  await addPeriod(member.user_id, '2026-05-01T00:00:00Z');
  const changed = await both(page(null), token, { 'if-none-match': etag });
  expect(changed.status).toBe(200);
  expect(changed.header('etag')).not.toBe(etag);
});

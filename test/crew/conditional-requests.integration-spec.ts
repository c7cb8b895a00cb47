import { SANDBOX_MEMBERS } from '@svc/contracts';
import { partner } from '../support/factories';
import {
  addSeaTimeEntries,
  addVesselPeriods,
  createCrewMember,
  databaseToday,
} from '../support/app-factories';
import type { HttpResponse } from '../support/http';
import { useCrewApi } from '../support/starters/crew-api';
import { accessToken } from '../support/oauth/flow';

/**
 * Conditional requests on the four crew-data endpoints (RFC 9110 §13, docs/rules.md Crew
 * records): strong ETag and Last-Modified on every 200, 304 without a body for If-None-Match or
 * If-Modified-Since, If-None-Match taking precedence (§13.2.2), a new ETag after a record change
 * made through the internal records API, and ETags that differ between callers who may see
 * different bodies.
 */
jest.setTimeout(30_000);

const { auth, crew } = useCrewApi();
const ENDPOINTS = ['/v1/me', '/v1/me/sea-time', '/v1/me/sea-time/recent', '/v1/me/vessels'] as const;

/** A fresh member with a small record and a token with every scope. */
async function memberWithRecord() {
  const member = await createCrewMember(auth, crew);
  await addVesselPeriods(crew.db, member.user_id, 5);
  await addSeaTimeEntries(crew.db, member.user_id, 20, await databaseToday(crew.db));
  return { member, token: await accessToken(auth, member) };
}

function validators(res: HttpResponse): { etag: string; lastModified: string } {
  expect(res.status).toBe(200);
  const etag = res.header('etag');
  const lastModified = res.header('last-modified');
  expect(etag).toMatch(/^"[^"]+"$/); // strong (RFC 9110 §8.8.3)
  expect(lastModified).toMatch(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
  return { etag: etag!, lastModified: lastModified! };
}

function expectNotModified(res: HttpResponse, etag: string): void {
  expect({ status: res.status, body: res.text }).toEqual({ status: 304, body: '' });
  expect(res.header('etag')).toBe(etag);
  expect(res.header('last-modified')).toBeDefined();
  expect(res.header('cache-control')).toBe('private, no-cache');
  expect(res.header('x-request-id')).toBeDefined();
}

describe.each(ENDPOINTS)('%s', (path) => {
  let token: string;
  beforeAll(async () => {
    ({ token } = await memberWithRecord());
  });

  it('has Last-Modified = record_updated_at truncated to the second', async () => {
    const res = await crew.get(path, token);
    const { lastModified } = validators(res);
    const shown = Date.parse(res.json<{ record_updated_at: string }>().record_updated_at);
    // The trend's window also moves at each month's start (its Last-Modified is never earlier).
    expect(Date.parse(lastModified)).toBeGreaterThanOrEqual(Math.floor(shown / 1000) * 1000);
    if (path !== '/v1/me/sea-time/recent')
      expect(Date.parse(lastModified)).toBe(Math.floor(shown / 1000) * 1000);
    expect(res.header('cache-control')).toBe('private, no-cache');
  });

  it('answers 304 without a body to a matching If-None-Match (also a weak or listed one)', async () => {
    const { etag } = validators(await crew.get(path, token));
    expectNotModified(await crew.get(path, token, { 'if-none-match': etag }), etag);
    expectNotModified(await crew.get(path, token, { 'if-none-match': `W/${etag}` }), etag);
    expectNotModified(await crew.get(path, token, { 'if-none-match': `"other", ${etag}` }), etag);
    expectNotModified(await crew.get(path, token, { 'if-none-match': '*' }), etag);
    expect((await crew.get(path, token, { 'if-none-match': '"other"' })).status).toBe(200);
  });

  it('answers 304 to If-Modified-Since at or after Last-Modified, 200 before it', async () => {
    const { etag, lastModified } = validators(await crew.get(path, token));
    expectNotModified(await crew.get(path, token, { 'if-modified-since': lastModified }), etag);
    const later = new Date(Date.parse(lastModified) + 60_000).toUTCString();
    expectNotModified(await crew.get(path, token, { 'if-modified-since': later }), etag);
    const earlier = new Date(Date.parse(lastModified) - 1000).toUTCString();
    expect((await crew.get(path, token, { 'if-modified-since': earlier })).status).toBe(200);
  });

  it('lets If-None-Match win over If-Modified-Since (RFC 9110 §13.2.2)', async () => {
    const { etag, lastModified } = validators(await crew.get(path, token));
    const stale = await crew.get(path, token, {
      'if-none-match': '"stale"',
      'if-modified-since': lastModified,
    });
    expect(stale.status).toBe(200);
    const earlier = new Date(Date.parse(lastModified) - 3600_000).toUTCString();
    expectNotModified(
      await crew.get(path, token, { 'if-none-match': etag, 'if-modified-since': earlier }),
      etag,
    );
  });
});

describe('a record change makes a new ETag', () => {
  it('a profile change (internal API): /v1/me has a new ETag and record_updated_at', async () => {
    const { member, token } = await memberWithRecord();
    const before = await crew.get('/v1/me', token);
    const { etag } = validators(before);
    const patched = await crew.internal('PATCH', `/internal/v1/crew/${member.user_id}/profile`, {
      role: 'Master',
    });
    expect(patched.status).toBe(200);
    const after = await crew.get('/v1/me', token, { 'if-none-match': etag });
    expect(after.status).toBe(200);
    expect(after.header('etag')).not.toBe(etag);
    expect(after.json<{ role: string }>().role).toBe('Master');
    expect(Date.parse(after.json<{ record_updated_at: string }>().record_updated_at)).toBeGreaterThan(
      Date.parse(before.json<{ record_updated_at: string }>().record_updated_at),
    );
  });

  it('a sea-time entry: new ETags for the totals and the trend', async () => {
    const { member, token } = await memberWithRecord();
    const totals = validators(await crew.get('/v1/me/sea-time', token)).etag;
    const trend = validators(await crew.get('/v1/me/sea-time/recent', token)).etag;
    const today = await databaseToday(crew.db);
    const posted = await crew.internal('POST', `/internal/v1/crew/${member.user_id}/sea-time-entries`, {
      date: today,
      days_at_sea: 3,
      nautical_miles: 420,
      role: 'Master',
      verified: true,
    });
    expect(posted.status).toBe(201);
    expect((await crew.get('/v1/me/sea-time', token, { 'if-none-match': totals })).status).toBe(200);
    expect((await crew.get('/v1/me/sea-time/recent', token, { 'if-none-match': trend })).status).toBe(200);
  });

  it('a vessel period: a new ETag for the first page of the vessel history', async () => {
    const { member, token } = await memberWithRecord();
    const { etag } = validators(await crew.get('/v1/me/vessels', token));
    const posted = await crew.internal('POST', `/internal/v1/crew/${member.user_id}/vessel-periods`, {
      imo: '9074729',
      name: 'Nordic Aurora',
      role: 'Master',
      period_start: '2025-07-01T00:00:00Z',
      period_end: '2025-08-01T00:00:00Z',
      nautical_miles: 5100,
    });
    expect(posted.status).toBe(201);
    const after = await crew.get('/v1/me/vessels', token, { 'if-none-match': etag });
    expect(after.status).toBe(200);
    expect(after.json<{ vessels: { id: string }[] }>().vessels[0].id).toBe(posted.json<{ id: string }>().id);
  });
});

describe('callers who may see different bodies never share an ETag', () => {
  const alex = SANDBOX_MEMBERS[0];

  it('/v1/me of alex.morgan: the sponsor and another partner get different ETags', async () => {
    const sponsor = await accessToken(auth, alex, { scope: 'profile:read' });
    const other = await accessToken(auth, alex, {
      partner: partner('sandbox-partner-b'),
      scope: 'profile:read',
    });
    const sponsorView = await crew.get('/v1/me', sponsor);
    const { etag } = validators(sponsorView);
    expect(sponsorView.json<{ membership: Record<string, unknown> }>().membership.sponsored_by_you).toBe(
      true,
    );
    const otherView = await crew.get('/v1/me', other, { 'if-none-match': etag });
    expect(otherView.status).toBe(200);
    expect(otherView.header('etag')).not.toBe(etag);
    expect(otherView.json<{ membership: Record<string, unknown> }>().membership).not.toHaveProperty(
      'sponsored_by_you',
    );
  });

  it('tokens with other scopes get other ETags', async () => {
    const narrow = await accessToken(auth, alex, { scope: 'profile:read' });
    const wide = await accessToken(auth, alex);
    const a = validators(await crew.get('/v1/me', narrow)).etag;
    const b = validators(await crew.get('/v1/me', wide)).etag;
    expect(a).not.toBe(b);
  });

  it('pages of one scan differ, and each is stable', async () => {
    const { token } = await memberWithRecord();
    const first = await crew.get('/v1/me/vessels?limit=2', token);
    const cursor = first.json<{ next_cursor: string }>().next_cursor;
    const second = await crew.get(`/v1/me/vessels?limit=2&cursor=${encodeURIComponent(cursor)}`, token);
    expect(second.header('etag')).not.toBe(first.header('etag'));
    expect(second.header('last-modified')).toBe(first.header('last-modified'));
    expectNotModified(
      await crew.get(`/v1/me/vessels?limit=2&cursor=${encodeURIComponent(cursor)}`, token, {
        'if-none-match': second.header('etag')!,
      }),
      second.header('etag')!,
    );
    const wider = await crew.get('/v1/me/vessels?limit=3', token, { 'if-none-match': first.header('etag')! });
    expect(wider.status).toBe(200);
  });
});

import {
  addVesselPeriods,
  createCrewMember,
  type FactoryMember,
  type FactoryPeriod,
} from '../support/app-factories';
import { type HttpResponse, expectInvalidFields } from '../support/http';
import { useCrewApi } from '../support/starters/crew-api';
import { accessToken } from '../support/oauth/flow';

/**
 * `/v1/me/vessels` keyset pagination (docs/rules.md, Crew records): order period_start DESC then
 * id DESC, signed opaque cursors, and scans that stay free of duplicates and gaps for the periods
 * that existed when they began, with one record_updated_at on every page, while another task adds
 * and amends periods (moving some across the scan's position) through the internal records API.
 */
jest.setTimeout(30_000);

const { auth, crew } = useCrewApi();

interface Page {
  user_id: string;
  record_updated_at: string;
  vessels: FactoryPeriod[];
  next_cursor: string | null;
}

/** The decided order: period_start descending, then id descending (byte order). */
function sorted(periods: readonly FactoryPeriod[]): FactoryPeriod[] {
  return [...periods].sort((a, b) =>
    a.period_start === b.period_start
      ? Buffer.compare(Buffer.from(b.id), Buffer.from(a.id))
      : Date.parse(b.period_start) - Date.parse(a.period_start),
  );
}

function pagePath(limit: number | undefined, cursor: string | null): string {
  const query = new URLSearchParams();
  if (limit !== undefined) query.set('limit', String(limit));
  if (cursor) query.set('cursor', cursor);
  const q = query.toString();
  return `/v1/me/vessels${q ? `?${q}` : ''}`;
}

interface Scan {
  readonly pages: Page[];
  readonly responses: HttpResponse[];
  readonly items: FactoryPeriod[];
}

/** Follows next_cursor to the end; `between(n)` runs after page n (1-based) is read. */
async function scan(token: string, limit?: number, between?: (page: number) => Promise<void>): Promise<Scan> {
  const pages: Page[] = [];
  const responses: HttpResponse[] = [];
  let cursor: string | null = null;
  do {
    const res = await crew.get(pagePath(limit, cursor), token);
    expect({ status: res.status, body: res.text.slice(0, 300) }).toMatchObject({ status: 200 });
    const page = res.json<Page>();
    pages.push(page);
    responses.push(res);
    cursor = page.next_cursor;
    await between?.(pages.length);
  } while (cursor);
  return { pages, responses, items: pages.flatMap((p) => p.vessels) };
}

async function memberWithPeriods(count: number): Promise<{
  member: FactoryMember;
  periods: FactoryPeriod[];
  token: string;
}> {
  const member = await createCrewMember(auth, crew);
  const periods = await addVesselPeriods(crew.db, member.user_id, count);
  return { member, periods, token: await accessToken(auth, member, { scope: 'vessels:read' }) };
}

/** A latch: `open()` once, `wait()` any number of times. */
function latch() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, wait: () => opened };
}

describe('a scan of 120 periods, 7 at a time, while periods are added and amended', () => {
  it('returns each period that existed when it began exactly once, as it was then, on stable pages', async () => {
    const { member, periods, token } = await memberWithPeriods(120);
    const expected = sorted(periods);
    const path = (id: string) => `/internal/v1/crew/${member.user_id}/vessel-periods/${id}`;
    const scanStarted = latch();
    const writesHalfDone = latch();
    const added: string[] = [];
    const amended = new Map<string, Partial<FactoryPeriod>>();

    const write = async (res: Promise<HttpResponse>, status: number) => {
      const answer = await res;
      expect(`${answer.status} ${answer.text.slice(0, 300)}`).toMatch(new RegExp(`^${status} `));
      return answer.json<{ id: string }>();
    };
    const newPeriod = (start: string, end: string, name: string) => ({
      imo: '9704611',
      name,
      role: 'Master',
      period_start: start,
      period_end: end,
      nautical_miles: 100,
    });

    const writer = async () => {
      await scanStarted.wait();
      const newest = expected[0].period_start;
      const oldest = expected[expected.length - 1].period_start;
      // Newer than everything (already behind the scan), in the middle, older than everything.
      added.push(
        (
          await write(
            crew.internal(
              'POST',
              `/internal/v1/crew/${member.user_id}/vessel-periods`,
              newPeriod('2026-01-01', '2026-01-20', 'Newest'),
            ),
            201,
          )
        ).id,
      );
      added.push(
        (
          await write(
            crew.internal(
              'POST',
              `/internal/v1/crew/${member.user_id}/vessel-periods`,
              newPeriod(expected[60].period_start, expected[60].period_end, 'Middle'),
            ),
            201,
          )
        ).id,
      );
      // An unseen period moved before the scan's position (a naive scan would skip it) ...
      const unseen = expected[100];
      const moved = { period_start: newest, period_end: expected[0].period_end, name: 'Moved up' };
      amended.set(unseen.id, moved);
      await write(crew.internal('PATCH', path(unseen.id), moved), 200);
      // ... and a seen one moved behind it (a naive scan would show it twice).
      const seen = expected[3];
      amended.set(seen.id, { period_start: oldest, period_end: oldest, name: 'Moved down' });
      await write(
        crew.internal('PATCH', path(seen.id), {
          period_start: oldest,
          period_end: oldest,
          name: 'Moved down',
        }),
        200,
      );
      writesHalfDone.open();
      // The rest while the scan goes on.
      added.push(
        (
          await write(
            crew.internal(
              'POST',
              `/internal/v1/crew/${member.user_id}/vessel-periods`,
              newPeriod('1990-01-01', '1990-02-01', 'Oldest'),
            ),
            201,
          )
        ).id,
      );
      for (const index of [40, 80, 119]) {
        const p = expected[index];
        amended.set(p.id, { role: 'Amended', nautical_miles: 1 });
        await write(crew.internal('PATCH', path(p.id), { role: 'Amended', nautical_miles: 1 }), 200);
      }
      const twice = expected[20];
      amended.set(twice.id, {
        period_start: '2026-02-01T00:00:00.000Z',
        period_end: '2026-02-02T00:00:00.000Z',
      });
      await write(
        crew.internal('PATCH', path(twice.id), {
          period_start: '2026-02-01T00:00:00Z',
          period_end: '2026-02-02T00:00:00Z',
        }),
        200,
      );
    };

    const reader = scan(token, 7, async (page) => {
      if (page === 2) scanStarted.open();
      if (page === 4) await writesHalfDone.wait();
    });
    const [result] = await Promise.all([reader, writer()]);

    // 120 / 7: 17 full pages and one of 1.
    expect(result.pages).toHaveLength(18);
    expect(result.pages.slice(0, -1).every((p) => p.vessels.length === 7)).toBe(true);
    expect(result.pages[17].next_cursor).toBeNull();
    // No duplicate, none missing, nothing new, each as it was when the scan began, in order.
    const ids = result.items.map((v) => v.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(result.items).toEqual(expected);
    // One snapshot: the same record_updated_at and Last-Modified on every page.
    expect(new Set(result.pages.map((p) => p.record_updated_at)).size).toBe(1);
    expect(new Set(result.responses.map((r) => r.header('last-modified'))).size).toBe(1);
    expect(new Set(result.responses.map((r) => r.header('etag'))).size).toBe(18);

    // A fresh scan sees the new state: the additions, the amendments, the same count of each.
    const fresh = await scan(token, 7);
    expect(Date.parse(fresh.pages[0].record_updated_at)).toBeGreaterThan(
      Date.parse(result.pages[0].record_updated_at),
    );
    expect(new Set(fresh.pages.map((p) => p.record_updated_at)).size).toBe(1);
    const freshIds = fresh.items.map((v) => v.id);
    expect(freshIds).toHaveLength(123);
    expect(new Set(freshIds)).toEqual(new Set([...expected.map((p) => p.id), ...added]));
    const now = expected.map((p) => ({ ...p, ...amended.get(p.id) }));
    const fromFresh = new Map(fresh.items.map((v) => [v.id, v]));
    for (const p of now) expect(fromFresh.get(p.id)).toEqual(p);
    const starts = fresh.items.map((v) => v.period_start);
    expect(fresh.items).toEqual(sorted(fresh.items));
    expect(starts[0]).toBe('2026-02-01T00:00:00.000Z');
  });

  it('pages by 50 when no limit is given, and carries the page size in the cursor', async () => {
    const { periods, token } = await memberWithPeriods(120);
    const result = await scan(token);
    expect(result.pages.map((p) => p.vessels.length)).toEqual([50, 50, 20]);
    expect(result.items).toEqual(sorted(periods));
    const first = await crew.get('/v1/me/vessels?limit=30', token);
    const cursor = first.json<Page>().next_cursor!;
    const second = await crew.get(`/v1/me/vessels?cursor=${encodeURIComponent(cursor)}`, token);
    expect(second.json<Page>().vessels).toHaveLength(30);
    const resized = await crew.get(`/v1/me/vessels?limit=5&cursor=${encodeURIComponent(cursor)}`, token);
    expect(resized.json<Page>().vessels.map((v) => v.id)).toEqual(
      sorted(periods)
        .slice(30, 35)
        .map((p) => p.id),
    );
  });
});

describe('validation of limit and cursor (422 invalid_request)', () => {
  it.each(['0', '201', '-1', '1.5', 'ten', '', '1e2'])(
    'limit=%p → an errors entry for limit',
    async (limit) => {
      const { token } = await memberWithPeriods(3);
      expectInvalidFields(await crew.get(`/v1/me/vessels?limit=${encodeURIComponent(limit)}`, token), [
        'limit',
      ]);
    },
  );

  it('a repeated limit → an errors entry for limit', async () => {
    const { token } = await memberWithPeriods(3);
    expectInvalidFields(await crew.get('/v1/me/vessels?limit=5&limit=6', token), ['limit']);
  });

  it('accepts the bounds 1 and 200', async () => {
    const { token } = await memberWithPeriods(3);
    expect((await crew.get('/v1/me/vessels?limit=1', token)).json<Page>().vessels).toHaveLength(1);
    expect((await crew.get('/v1/me/vessels?limit=200', token)).json<Page>().vessels).toHaveLength(3);
  });

  it('refuses a tampered, forged, foreign or garbage cursor with an errors entry for cursor', async () => {
    const { token } = await memberWithPeriods(10);
    const other = await memberWithPeriods(10);
    const cursor = (await crew.get('/v1/me/vessels?limit=2', token)).json<Page>().next_cursor!;
    const foreign = (await crew.get('/v1/me/vessels?limit=2', other.token)).json<Page>().next_cursor!;
    const [payload, signature] = cursor.split('.');
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...decoded, limit: 200 })).toString('base64url');
    const flipped = signature.slice(0, -1) + (signature.endsWith('A') ? 'B' : 'A');
    for (const bad of [
      `${forged}.${signature}`,
      `${payload}.${flipped}`,
      `${payload}x.${signature}`,
      foreign,
      'garbage',
      `${payload}.`,
      'x'.repeat(3000),
    ]) {
      const res = await crew.get(`/v1/me/vessels?cursor=${encodeURIComponent(bad)}`, token);
      expectInvalidFields(res, ['cursor']);
    }
    expect((await crew.get(`/v1/me/vessels?cursor=${encodeURIComponent(cursor)}`, token)).status).toBe(200);
  });
});

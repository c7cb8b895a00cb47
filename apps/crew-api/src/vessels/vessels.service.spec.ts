import type { Principal } from '@svc/security';
import { FakeRecordWriter, LOCKED_MEMBER } from '../../../../test/support/fake-record-writer';
import { CursorCodec } from './cursor';
import type { PeriodRow, PeriodVersion, VesselsRepository } from './vessels.repository';
import { VesselPageCache, VesselsService } from './vessels.service';

const codec = new CursorCodec('k'.repeat(32));
const principal: Principal = {
  user_id: 'usr_1',
  client_id: 'partner-a',
  scopes: ['vessels:read'],
  expires_at: '2026-02-01T00:00:00Z',
};

function period(i: number): PeriodRow {
  const start = new Date(Date.UTC(2025, 0, 100 - i)).toISOString();
  return {
    id: `vp_${String(i).padStart(3, '0')}`,
    imo: '9074729',
    name: 'Nordic Aurora',
    role: 'Master',
    periodStart: start,
    periodEnd: start,
    days: 1,
    nauticalMiles: 10,
    startExact: `${start.slice(0, 23)}000Z`,
  };
}

const current: PeriodVersion = {
  id: 'vp_1',
  version: 1,
  userId: 'usr_1',
  imo: '9074729',
  name: 'Nordic Aurora',
  role: 'Master',
  periodStart: new Date('2025-01-01T00:00:00Z'),
  periodEnd: new Date('2025-02-01T00:00:00Z'),
  days: 31,
  nauticalMiles: 100,
  validFrom: '2025-12-01T00:00:00.000000Z',
};

const SNAPSHOT = '2026-01-31T12:00:00.000001Z';

function setup(total = 10, served: number[] = [1, 1], { cached = 100, member = true } = {}) {
  const all = Array.from({ length: total }, (_, i) => period(i));
  const pages: { limit: number; asOf: string; after?: { start: string; id: string } }[] = [];
  const snapshots: string[] = [];
  const inserted: PeriodVersion[] = [];
  const closed: unknown[] = [];
  const servedAnswers = [...served];
  const repository = {
    snapshot: (userId: string) => {
      snapshots.push(userId);
      return Promise.resolve(member ? SNAPSHOT : undefined);
    },
    page: (_userId: string, limit: number, asOf: string, after?: { start: string; id: string }) => {
      pages.push({ limit, asOf, after });
      if (!member) return Promise.resolve(undefined);
      const from = after ? all.findIndex((p) => p.id === after.id) + 1 : 0;
      return Promise.resolve({
        userId: 'usr_1',
        asOf: `${asOf.slice(0, 23)}Z`,
        asOfExact: asOf,
        periods: all.slice(from, from + limit),
      });
    },
    current: () => Promise.resolve(current),
    vesselsServed: () => Promise.resolve(servedAnswers.shift() ?? 1),
    close: (...args: unknown[]) => {
      closed.push(args.slice(1));
      return Promise.resolve();
    },
    insert: (_tx: unknown, v: PeriodVersion) => {
      inserted.push(v);
      return Promise.resolve();
    },
  } as unknown as VesselsRepository;
  const writer = new FakeRecordWriter(LOCKED_MEMBER);
  return {
    service: new VesselsService(repository, writer.asWriter(), codec, new VesselPageCache(cached)),
    writer,
    pages,
    snapshots,
    inserted,
    closed,
  };
}

describe('VesselsService.page', () => {
  it('asks for limit + 1 rows of the snapshot and offers a cursor only when more follow', async () => {
    const { service, pages } = setup(10);
    const first = await (await service.page(principal, { limit: 4 })).body();
    expect(pages[0]).toMatchObject({ limit: 5, asOf: SNAPSHOT });
    expect(first.vessels.map((v) => v.id)).toEqual(['vp_000', 'vp_001', 'vp_002', 'vp_003']);
    expect(codec.decode('usr_1', first.next_cursor!)).toEqual({
      asOf: SNAPSHOT,
      start: period(3).startExact,
      id: 'vp_003',
      limit: 4,
    });
  });

  it('refuses a signed cursor it cannot read, as invalid_cursor', async () => {
    const { service } = setup(10);
    const cursor = codec.encode('usr_1', { asOf: 'x', start: 'y', id: 'vp_007', limit: 4 });
    await expect(service.page(principal, { cursor })).rejects.toMatchObject({ code: 'invalid_cursor' });
  });

  it("keeps the cursor's page size unless a limit is given, and ends with next_cursor null", async () => {
    const { service, pages } = setup(10);
    const cursor = codec.encode('usr_1', {
      asOf: SNAPSHOT,
      start: period(5).startExact,
      id: 'vp_005',
      limit: 4,
    });
    const page = await (await service.page(principal, { cursor })).body();
    expect(pages[0]).toMatchObject({ limit: 5, asOf: SNAPSHOT, after: { id: 'vp_005' } });
    expect(page.vessels.map((v) => v.id)).toEqual(['vp_006', 'vp_007', 'vp_008', 'vp_009']);
    expect(page.next_cursor).toBeNull();
    await (await service.page(principal, { cursor, limit: 2 })).body();
    expect(pages[1].limit).toBe(3);
  });

  it('defaults to 50, and gives pages of one scan distinct ETags with one Last-Modified', async () => {
    const { service, pages } = setup(120);
    const first = await service.page(principal, {});
    const firstBody = await first.body();
    expect(pages[0].limit).toBe(51);
    const second = await service.page(principal, { cursor: firstBody.next_cursor! });
    expect(second.etag).not.toBe(first.etag);
    expect(second.lastModified).toEqual(first.lastModified);
    expect(first.lastModified).toEqual(new Date('2026-01-31T12:00:00.000Z'));
    expect((await second.body()).record_updated_at).toBe(firstBody.record_updated_at);
  });

  it("answers a first page's validators from the snapshot alone, and a cursor page's from the cursor", async () => {
    const { service, pages, snapshots } = setup(120);
    const first = await service.page(principal, {});
    expect(snapshots).toEqual(['usr_1']);
    expect(pages).toHaveLength(0);
    const cursor = codec.encode('usr_1', {
      asOf: SNAPSHOT,
      start: period(49).startExact,
      id: 'vp_049',
      limit: 50,
    });
    const second = await service.page(principal, { cursor });
    expect(snapshots).toHaveLength(1);
    expect(pages).toHaveLength(0);
    expect(second.etag).not.toBe(first.etag);
  });

  it('reads a page of one snapshot once, and again for a new snapshot, another position or size', async () => {
    const { service, pages } = setup(120);
    const a = await (await service.page(principal, {})).body();
    const b = await (await service.page({ ...principal, client_id: 'partner-b' }, {})).body();
    expect(b).toEqual(a);
    expect(pages).toHaveLength(1);
    await (await service.page(principal, { limit: 10 })).body();
    await (await service.page(principal, { cursor: a.next_cursor! })).body();
    const later = codec.encode('usr_1', {
      asOf: '2026-02-01T00:00:00.000000Z',
      start: period(49).startExact,
      id: 'vp_049',
      limit: 50,
    });
    await (await service.page(principal, { cursor: later })).body();
    expect(pages.map((p) => [p.asOf, p.limit, p.after?.id ?? null])).toEqual([
      [SNAPSHOT, 51, null],
      [SNAPSHOT, 11, null],
      [SNAPSHOT, 51, 'vp_049'],
      ['2026-02-01T00:00:00.000000Z', 51, 'vp_049'],
    ]);
  });

  it('reads every page with no cache', async () => {
    const { service, pages } = setup(10, [1, 1], { cached: 0 });
    for (let i = 0; i < 3; i += 1) await (await service.page(principal, {})).body();
    expect(pages).toHaveLength(3);
  });

  it('answers member_not_found for a member without a record, before and after the validators', async () => {
    const { service } = setup(10, [1, 1], { member: false });
    await expect(service.page(principal, {})).rejects.toMatchObject({ code: 'member_not_found' });
    const cursor = codec.encode('usr_1', {
      asOf: SNAPSHOT,
      start: period(3).startExact,
      id: 'vp_003',
      limit: 4,
    });
    const page = await service.page(principal, { cursor });
    await expect(page.body()).rejects.toMatchObject({ code: 'member_not_found' });
  });
});

describe('VesselsService writes', () => {
  it('adding a period stamps the vessel history and announces it (and the totals when a ship is new)', async () => {
    const { service, writer, inserted } = setup(0, [3, 4]);
    const answer = await service.addPeriod('usr_1', {
      imo: '9321483',
      name: 'Atlantic Meridian',
      role: 'Master',
      periodStart: new Date('2025-05-01T00:00:00Z'),
      periodEnd: new Date('2025-05-11T00:00:00Z'),
      days: 10,
      nauticalMiles: 900,
    });
    expect(answer).toMatchObject({ version: 1, imo: '9321483', period_start: '2025-05-01T00:00:00.000Z' });
    expect(inserted[0].id).toMatch(/^vp_/);
    expect(writer.stamps).toEqual([{ vessels: true }]);
    expect(writer.events).toEqual(['user.vessels.updated', 'user.sea_time.updated']);
  });

  it('an amendment closes the current version and adds the next', async () => {
    const { service, writer, inserted, closed } = setup(0, [2, 2]);
    const answer = await service.amendPeriod('usr_1', 'vp_1', { role: 'Chief Officer' });
    expect(answer).toMatchObject({ id: 'vp_1', version: 2, role: 'Chief Officer', days: 31 });
    expect(closed).toEqual([['vp_1', 1, inserted[0].validFrom]]);
    expect(writer.events).toEqual(['user.vessels.updated']);
  });

  it('an amendment that changes nothing writes nothing', async () => {
    const { service, writer, inserted } = setup();
    const answer = await service.amendPeriod('usr_1', 'vp_1', { role: 'Master', days: 31 });
    expect(answer).toMatchObject({ version: 1, updated_at: '2025-12-01T00:00:00.000Z' });
    expect(inserted).toEqual([]);
    expect(writer.stamps).toEqual([]);
    expect(writer.events).toEqual([]);
  });

  it('refuses an amendment that would end the period before it starts', async () => {
    const { service, writer } = setup();
    await expect(
      service.amendPeriod('usr_1', 'vp_1', { periodStart: new Date('2025-03-01T00:00:00Z') }),
    ).rejects.toMatchObject({ code: 'invalid_period' });
    expect(writer.events).toEqual([]);
  });
});

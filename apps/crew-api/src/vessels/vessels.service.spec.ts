import type { Principal } from '@svc/security';
import { FakeRecordWriter, LOCKED_MEMBER } from '../../../../test/support/fakes/record-writer';
import { CursorCodec } from './cursor';
import type { PeriodRow, PeriodVersion, VesselsRepository } from './vessels.repository';
import { VesselsService } from './vessels.service';

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

function setup(total = 10, served: number[] = [1, 1]) {
  const all = Array.from({ length: total }, (_, i) => period(i));
  const pages: { limit: number; after?: unknown }[] = [];
  const inserted: PeriodVersion[] = [];
  const closed: unknown[] = [];
  const servedAnswers = [...served];
  const repository = {
    page: (_userId: string, limit: number, after?: { start: string; id: string }) => {
      pages.push({ limit, after });
      const from = after ? all.findIndex((p) => p.id === after.id) + 1 : 0;
      return Promise.resolve({
        userId: 'usr_1',
        asOf: '2026-01-31T12:00:00.000Z',
        asOfExact: '2026-01-31T12:00:00.000001Z',
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
    service: new VesselsService(repository, writer.asWriter(), codec),
    writer,
    pages,
    inserted,
    closed,
  };
}

describe('VesselsService.page', () => {
  it('asks for limit + 1 rows and offers a cursor only when more follow', async () => {
    const { service, pages } = setup(10);
    const first = await service.page(principal, { limit: 4 });
    expect(pages[0].limit).toBe(5);
    expect(first.body.vessels.map((v) => v.id)).toEqual(['vp_000', 'vp_001', 'vp_002', 'vp_003']);
    expect(codec.decode('usr_1', first.body.next_cursor!)).toEqual({
      asOf: '2026-01-31T12:00:00.000001Z',
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
      asOf: '2026-01-31T12:00:00.000001Z',
      start: period(5).startExact,
      id: 'vp_005',
      limit: 4,
    });
    const page = await service.page(principal, { cursor });
    expect(pages[0]).toMatchObject({
      limit: 5,
      after: { id: 'vp_005', asOf: '2026-01-31T12:00:00.000001Z' },
    });
    expect(page.body.vessels.map((v) => v.id)).toEqual(['vp_006', 'vp_007', 'vp_008', 'vp_009']);
    expect(page.body.next_cursor).toBeNull();
    await service.page(principal, { cursor, limit: 2 });
    expect(pages[1].limit).toBe(3);
  });

  it('defaults to 50, and gives pages of one scan distinct ETags with one Last-Modified', async () => {
    const { service, pages } = setup(120);
    const first = await service.page(principal, {});
    expect(pages[0].limit).toBe(51);
    const second = await service.page(principal, { cursor: first.body.next_cursor! });
    expect(second.etag).not.toBe(first.etag);
    expect(second.lastModified).toEqual(first.lastModified);
    expect(second.body.record_updated_at).toBe(first.body.record_updated_at);
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

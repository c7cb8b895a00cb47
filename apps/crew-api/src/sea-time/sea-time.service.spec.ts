import type { Principal } from '@svc/security';
import type { RecordWriter } from '../records/record-writer.service';
import { RecordsException } from '../records/records.exception';
import type { RecentRow, SeaTimeRepository, SeaTimeVersion, TotalsRow } from './sea-time.repository';
import { SeaTimeCache, SeaTimeService, trendLastModified } from './sea-time.service';

describe('trendLastModified', () => {
  it('is the record time, or the start of the current month when later', () => {
    expect(trendLastModified('2026-03-10T08:00:00.000Z', '2026-03').toISOString()).toBe(
      '2026-03-10T08:00:00.000Z',
    );
    expect(trendLastModified('2026-01-10T08:00:00.000Z', '2026-03').toISOString()).toBe(
      '2026-03-01T00:00:00.000Z',
    );
  });
});

const principal = {
  user_id: 'usr_1',
  client_id: 'partner-a',
  scopes: ['seatime:read'],
} as unknown as Principal;

const totalsRow = (days: number): TotalsRow => ({
  userId: 'usr_1',
  daysAtSea: days,
  nauticalMiles: days * 100,
  verifiedDays: 0,
  verifiedMiles: 0,
  vesselsServed: 1,
  yearsActive: 1,
  byRole: [{ role: 'Master', days }],
});

function setup(cached = 10) {
  let version: SeaTimeVersion | undefined = {
    recordUpdatedAt: { iso: '2026-03-10T08:00:00.123Z', exact: '2026-03-10T08:00:00.123456Z' },
    currentMonth: '2026-03',
  };
  const reads: string[] = [];
  const repository = {
    version: () => Promise.resolve(version),
    totals: (userId: string, asOf: string) => {
      reads.push(`totals ${userId} ${asOf}`);
      return Promise.resolve(totalsRow(reads.length));
    },
    recent: (userId: string, asOf: string, month: string) => {
      reads.push(`recent ${userId} ${asOf} ${month}`);
      return Promise.resolve<RecentRow>({ userId, months: [] });
    },
  } as unknown as SeaTimeRepository;
  const service = new SeaTimeService(repository, {} as RecordWriter, new SeaTimeCache(cached));
  return {
    service,
    reads,
    setVersion: (v: SeaTimeVersion | undefined) => {
      version = v;
    },
  };
}

describe('SeaTimeService', () => {
  it('gives validators from the version alone, and aggregates only for a body', async () => {
    const { service, reads } = setup();
    const totals = await service.totals(principal);
    const recent = await service.recent(principal);
    expect(totals.lastModified.toISOString()).toBe('2026-03-10T08:00:00.123Z');
    expect(totals.etag).toMatch(/^"/);
    expect(recent.etag).not.toBe(totals.etag);
    expect(reads).toEqual([]);
    const body = await totals.body();
    expect(body).toMatchObject({ record_updated_at: '2026-03-10T08:00:00.123Z', totals: { days_at_sea: 1 } });
    expect(reads).toEqual(['totals usr_1 2026-03-10T08:00:00.123456Z']);
    await recent.body();
    expect(reads[1]).toBe('recent usr_1 2026-03-10T08:00:00.123456Z 2026-03');
  });

  it('aggregates a version once, and a new version, or a new month, again', async () => {
    const { service, reads, setVersion } = setup();
    const first = await (await service.totals(principal)).body();
    expect(await (await service.totals(principal)).body()).toEqual(first);
    expect(reads).toHaveLength(1);

    setVersion({
      recordUpdatedAt: { iso: '2026-03-10T08:00:01.000Z', exact: '2026-03-10T08:00:01.000000Z' },
      currentMonth: '2026-03',
    });
    const next = await service.totals(principal);
    expect(await next.body()).toMatchObject({ totals: { days_at_sea: 2 } });
    await (await service.recent(principal)).body();
    setVersion({
      recordUpdatedAt: { iso: '2026-03-10T08:00:01.000Z', exact: '2026-03-10T08:00:01.000000Z' },
      currentMonth: '2026-04',
    });
    const april = await service.recent(principal);
    await april.body();
    expect(reads.slice(2)).toEqual([
      'recent usr_1 2026-03-10T08:00:01.000000Z 2026-03',
      'recent usr_1 2026-03-10T08:00:01.000000Z 2026-04',
    ]);
    expect(april.lastModified.toISOString()).toBe('2026-04-01T00:00:00.000Z');
  });

  it('aggregates every time with no room to keep answers', async () => {
    const { service, reads } = setup(0);
    await (await service.totals(principal)).body();
    await (await service.totals(principal)).body();
    expect(reads).toHaveLength(2);
  });

  it('refuses a member without a record', async () => {
    const { service, setVersion } = setup();
    setVersion(undefined);
    await expect(service.totals(principal)).rejects.toBeInstanceOf(RecordsException);
    await expect(service.recent(principal)).rejects.toBeInstanceOf(RecordsException);
  });
});

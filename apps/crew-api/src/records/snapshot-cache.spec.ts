import type { VesselPageResponse } from '@svc/contracts';
import { SnapshotCache } from './snapshot-cache';

const page = (n: number): VesselPageResponse => ({
  user_id: 'usr_1',
  record_updated_at: '2026-01-31T12:00:00.000Z',
  vessels: [],
  next_cursor: `c${n}`,
});

describe('SnapshotCache', () => {
  it('reads a page once, and concurrent requests for it share the read', async () => {
    const cache = new SnapshotCache<VesselPageResponse>(10);
    const load = jest.fn(() => Promise.resolve(page(1)));
    const [a, b] = await Promise.all([cache.get('k', load), cache.get('k', load)]);
    expect(await cache.get('k', load)).toBe(a);
    expect(b).toBe(a);
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('lets the least recently used page go first when full', async () => {
    const cache = new SnapshotCache<VesselPageResponse>(2);
    const loads: string[] = [];
    const load = (key: string) => () => {
      loads.push(key);
      return Promise.resolve(page(loads.length));
    };
    await cache.get('a', load('a'));
    await cache.get('b', load('b'));
    await cache.get('a', load('a')); // a is now the most recent
    await cache.get('c', load('c')); // b goes
    expect(cache.size).toBe(2);
    await cache.get('a', load('a'));
    await cache.get('b', load('b'));
    expect(loads).toEqual(['a', 'b', 'c', 'b']);
  });

  it('keeps neither a failed read nor a page of no member', async () => {
    const cache = new SnapshotCache<VesselPageResponse>(10);
    await expect(cache.get('k', () => Promise.reject(new Error('database down')))).rejects.toThrow();
    expect(await cache.get('k', () => Promise.resolve(undefined))).toBeUndefined();
    expect(cache.size).toBe(0);
    expect(await cache.get('k', () => Promise.resolve(page(1)))).toEqual(page(1));
    expect(cache.size).toBe(1);
  });

  it('keeps nothing with no room', async () => {
    const cache = new SnapshotCache<VesselPageResponse>(0);
    const load = jest.fn(() => Promise.resolve(page(1)));
    await cache.get('k', load);
    await cache.get('k', load);
    expect(load).toHaveBeenCalledTimes(2);
    expect(cache.size).toBe(0);
  });
});

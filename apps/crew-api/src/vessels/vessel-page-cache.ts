import type { VesselPageResponse } from '@svc/contracts';

/**
 * The vessel-history pages this replica built, by what determines them: the member, the snapshot
 * (`as_of`), the keyset position and the page size. A snapshot's periods never change (a write
 * adds versions valid from a later write time, and moves vessels_updated_at past every snapshot a
 * reader has seen; docs/architecture.md, "Crew records"), so a page is never stale and nothing
 * has to invalidate it: a change makes a new snapshot, whose pages are other keys. Another
 * replica's copy is the same page. Bounded by entries, least recently used first out; concurrent
 * requests for a page wait for one query. A page that fails or finds no member is not kept.
 */
export class VesselPageCache {
  private readonly pages = new Map<string, Promise<VesselPageResponse | undefined>>();

  constructor(private readonly capacity: number) {}

  get(
    key: string,
    load: () => Promise<VesselPageResponse | undefined>,
  ): Promise<VesselPageResponse | undefined> {
    if (this.capacity === 0) return load();
    const kept = this.pages.get(key);
    if (kept) {
      this.pages.delete(key);
      this.pages.set(key, kept);
      return kept;
    }
    const loading = load();
    this.pages.set(key, loading);
    const forget = () => {
      if (this.pages.get(key) === loading) this.pages.delete(key);
    };
    loading.then((page) => page ?? forget(), forget);
    for (const oldest of this.pages.keys()) {
      if (this.pages.size <= this.capacity) break;
      this.pages.delete(oldest);
    }
    return loading;
  }

  get size(): number {
    return this.pages.size;
  }
}

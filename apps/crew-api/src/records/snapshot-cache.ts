/**
 * Representations of a member's record that this replica built, by what determines them: the
 * member, the snapshot they were read as of (a write time), and whatever else shapes them (a
 * page's position and size, the trend's month). A snapshot never changes: a write adds rows valid
 * from a later write time and moves the member's version past every snapshot a reader has seen
 * (docs/architecture.md, "Crew records"), so a kept value is never stale and nothing has to
 * invalidate it: a change makes a new snapshot, whose values are other keys. Another replica's copy
 * is the same value. Bounded by entries, least recently used first out; concurrent requests for
 * one key wait for one read. A read that fails or finds no member is not kept.
 */
export class SnapshotCache<T> {
  private readonly values = new Map<string, Promise<T | undefined>>();

  constructor(private readonly capacity: number) {}

  /** `V`: which of the cache's kinds the key names (keys of different kinds must differ). */
  get<V extends T>(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    if (this.capacity === 0) return load();
    const kept = this.values.get(key);
    if (kept) {
      this.values.delete(key);
      this.values.set(key, kept);
      return kept as Promise<V | undefined>;
    }
    const loading = load();
    this.values.set(key, loading);
    const forget = () => {
      if (this.values.get(key) === loading) this.values.delete(key);
    };
    loading.then((value) => value ?? forget(), forget);
    for (const oldest of this.values.keys()) {
      if (this.values.size <= this.capacity) break;
      this.values.delete(oldest);
    }
    return loading;
  }

  get size(): number {
    return this.values.size;
  }
}

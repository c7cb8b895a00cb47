/**
 * Answers this replica built, keyed by member, snapshot and shape. A snapshot never changes (a
 * write makes a new one, docs/architecture.md "Crew records"), so nothing is ever invalidated.
 * LRU-bounded; concurrent requests share one read; a failed or empty read is not kept.
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

/** Runs one statement for a set of keys; resolves with its rows, each carrying its key. */
export type LookupQuery<Row> = (keys: readonly string[]) => Promise<Row[]>;

interface Waiter<Row> {
  readonly resolve: (rows: Row[]) => void;
  readonly reject: (err: unknown) => void;
}

/**
 * Gathers the lookups that concurrent requests make in one turn of the event loop and answers
 * them with one statement (`WHERE key = ANY($1)`), each caller getting its own key's rows.
 *
 * Why: on the hot reads most of a request's cost was the database round trip itself (the socket
 * write that wakes a backend, the reply, the pg client's bookkeeping), not the rows. Under load,
 * dozens of requests reach their lookup in the same turn; one round trip for all of them keeps
 * both crew-api's and PostgreSQL's CPU per request down. A lone request waits for nothing but the
 * end of the current turn (setImmediate).
 *
 * Each caller sees exactly what a query of its own, issued at the same moment, would have seen:
 * the statement runs after every caller asked, and a failure (database away, statement timeout)
 * rejects every caller of that batch with the same error, mapped to 503 like any other.
 */
export class BatchedLookup<Row> {
  private pending = new Map<string, Waiter<Row>[]>();
  private scheduled = false;

  constructor(
    private readonly query: LookupQuery<Row>,
    private readonly keyOf: (row: Row) => string,
    /** Keys per statement: one array parameter, so the plan stays a short index scan. */
    private readonly maxKeys = 100,
  ) {
    if (!Number.isInteger(maxKeys) || maxKeys < 1) throw new Error('maxKeys must be a positive integer');
  }

  /** The rows of one key (empty when there are none). */
  load(key: string): Promise<Row[]> {
    return new Promise<Row[]>((resolve, reject) => {
      const waiters = this.pending.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else this.pending.set(key, [{ resolve, reject }]);
      if (this.pending.size >= this.maxKeys) this.dispatch();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.dispatch();
        });
      }
    });
  }

  private dispatch(): void {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    void this.answer(batch);
  }

  private async answer(batch: Map<string, Waiter<Row>[]>): Promise<void> {
    let rows: Row[];
    try {
      rows = await this.query([...batch.keys()]);
    } catch (err) {
      for (const waiters of batch.values()) for (const w of waiters) w.reject(err);
      return;
    }
    const byKey = new Map<string, Row[]>();
    for (const row of rows) {
      const key = this.keyOf(row);
      const list = byKey.get(key);
      if (list) list.push(row);
      else byKey.set(key, [row]);
    }
    for (const [key, waiters] of batch) {
      const found = byKey.get(key) ?? [];
      // Every caller gets its own array: nobody can change what another caller reads.
      for (const w of waiters) w.resolve(found.slice());
    }
  }
}

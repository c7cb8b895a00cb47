/**
 * Group commit for one statement or one question: calls that arrive while a batch is in flight
 * wait and go together in the next one, so under load one round trip (one commit and WAL flush,
 * one RPC to auth-server) serves many deliveries, and an idle dispatcher still sends each call at
 * once. A failed batch fails each of its calls (each message is then retried on its own).
 *
 * One batch in flight by default: with two, batches stayed small under load and each statement
 * cost a database round trip of its own (webhooks bench: PostgreSQL CPU per delivery 0.18 →
 * 0.14 ms, the dispatcher's 0.34 → 0.30 ms, for a few ms more latency at a moderate rate).
 */
export class GroupBatcher<I, O> {
  private queue: { item: I; resolve: (o: O) => void; reject: (err: unknown) => void }[] = [];
  private inFlight = 0;

  constructor(
    private readonly write: (items: readonly I[]) => Promise<O[]>,
    private readonly maxBatch = 200,
    private readonly maxInFlight = 1,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.inFlight += 1;
      void this.write(batch.map((b) => b.item))
        .then(
          (results) => batch.forEach((b, i) => b.resolve(results[i])),
          (err: unknown) => batch.forEach((b) => b.reject(err)),
        )
        .finally(() => {
          this.inFlight -= 1;
          this.pump();
        });
    }
  }
}

/**
 * Group commit for one statement or one question: calls that arrive while a batch is in flight
 * wait and go together in the next one, so under load one round trip (one commit and WAL flush,
 * one RPC) serves many callers, and an idle app still sends each call at once. A failed batch
 * fails each of its calls.
 *
 * One batch in flight by default: with two, the dispatcher's batches stayed small under load and
 * each statement cost a database round trip of its own.
 *
 * `gatherTurn`: a call waits for the end of the current turn of the event loop (setImmediate), so
 * every call made in that turn shares the first batch too: for reads that many concurrent
 * requests reach in the same turn (crew-api's `/v1/me`), with several batches in flight.
 */
export class GroupBatcher<I, O> {
  private queue: { item: I; resolve: (o: O) => void; reject: (err: unknown) => void }[] = [];
  private inFlight = 0;
  private turnScheduled = false;

  constructor(
    private readonly write: (items: readonly I[]) => Promise<O[]>,
    private readonly maxBatch = 200,
    private readonly maxInFlight = 1,
    private readonly gatherTurn = false,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.next();
    });
  }

  private next(): void {
    if (!this.gatherTurn) {
      this.pump();
      return;
    }
    if (this.turnScheduled) return;
    this.turnScheduled = true;
    setImmediate(() => {
      this.turnScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.inFlight += 1;
      // The slot is freed, and the calls that waited for it sent, before this batch's callers go
      // on: their continuations (answering their requests) run while the next batch is in flight,
      // instead of holding it back.
      const settle = (each: (b: (typeof batch)[number], i: number) => void) => {
        this.inFlight -= 1;
        this.next();
        batch.forEach(each);
      };
      void this.write(batch.map((b) => b.item)).then(
        (results) => settle((b, i) => b.resolve(results[i])),
        (err: unknown) => settle((b) => b.reject(err)),
      );
    }
  }
}

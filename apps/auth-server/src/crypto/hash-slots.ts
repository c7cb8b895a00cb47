import { DependencyUnavailableError } from '@svc/platform';

/**
 * At most `running` password hashes at once, and at most `waiting` more queued; beyond that the
 * caller is told at once that sign-in is busy (503), rather than joining a queue that would push
 * everyone past the RPC timeout.
 *
 * scrypt runs on libuv's thread pool (4 threads by default), which the PostgreSQL driver also
 * needs to open a connection (SCRAM key derivation). Unbounded, a burst of sign-ins filled every
 * thread, new database connections waited past the pool's connect timeout, and sign-in answered
 * 500 (seen under a burst of 10 parallel sign-ins on a loaded 2-core machine).
 *
 * Fair between keys (the client address of a sign-in): one key runs at most `runningPerKey` hashes
 * and holds at most `waitingPerKey` places in the queue, and a freed slot goes to the waiting key
 * with the fewest hashes running (the earliest arrival among equals), so a flood from one address
 * neither fills the queue nor takes every slot: a member elsewhere finds a slot free or next.
 * Calls without a key share one key.
 */
export class HashSlots {
  private active = 0;
  private waitingCount = 0;
  private sequence = 0;
  private readonly runningByKey = new Map<string, number>();
  private readonly queues = new Map<string, { seq: number; resolve: () => void }[]>();

  constructor(
    private readonly running: number,
    private readonly waiting: number,
    private readonly waitingPerKey: number = waiting,
    private readonly runningPerKey: number = running,
  ) {}

  async run<T>(work: () => Promise<T>, key = ''): Promise<T> {
    if (this.active >= this.running || (this.runningByKey.get(key) ?? 0) >= this.runningPerKey) {
      const queue = this.queues.get(key) ?? [];
      if (this.waitingCount >= this.waiting || queue.length >= this.waitingPerKey) {
        throw new DependencyUnavailableError('password-hashing', new Error('too many sign-ins at once'));
      }
      this.queues.set(key, queue);
      this.waitingCount += 1;
      // The slot is handed over by `release` with `active` unchanged and this key counted.
      await new Promise<void>((resolve) => queue.push({ seq: this.sequence++, resolve }));
    } else {
      this.active += 1;
      this.countRunning(key);
    }
    try {
      return await work();
    } finally {
      const left = (this.runningByKey.get(key) ?? 1) - 1;
      if (left === 0) this.runningByKey.delete(key);
      else this.runningByKey.set(key, left);
      this.release();
    }
  }

  private release(): void {
    let chosen: string | undefined;
    let best: { running: number; seq: number } | undefined;
    for (const [key, queue] of this.queues) {
      const candidate = { running: this.runningByKey.get(key) ?? 0, seq: queue[0].seq };
      if (candidate.running >= this.runningPerKey) continue;
      if (
        !best ||
        candidate.running < best.running ||
        (candidate.running === best.running && candidate.seq < best.seq)
      ) {
        best = candidate;
        chosen = key;
      }
    }
    if (chosen === undefined) {
      // Nobody may take the slot (every waiting key runs its share): it stays free for a newcomer.
      this.active -= 1;
      return;
    }
    const queue = this.queues.get(chosen)!;
    const next = queue.shift()!;
    if (queue.length === 0) this.queues.delete(chosen);
    this.waitingCount -= 1;
    this.countRunning(chosen);
    next.resolve();
  }

  private countRunning(key: string): void {
    this.runningByKey.set(key, (this.runningByKey.get(key) ?? 0) + 1);
  }
}

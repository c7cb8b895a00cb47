import { DependencyUnavailableError } from '@svc/platform';

/**
 * At most `running` password hashes at once and `waiting` more queued; beyond that sign-in is
 * busy (503) at once, rather than queueing everyone past the RPC timeout. scrypt shares libuv's
 * thread pool with the PostgreSQL driver's SCRAM: unbounded, a burst of sign-ins starved new
 * database connections into 500s.
 *
 * Fair between keys (client addresses): one key runs at most `runningPerKey` hashes and queues
 * at most `waitingPerKey`, and a freed slot goes to the waiting key with the fewest running (the
 * earliest among equals), so a flood from one address leaves room for everyone else.
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
    let best: { key: string; running: number; seq: number } | undefined;
    for (const [key, queue] of this.queues) {
      const candidate = { key, running: this.runningByKey.get(key) ?? 0, seq: queue[0].seq };
      if (candidate.running >= this.runningPerKey) continue;
      if (!best || (candidate.running - best.running || candidate.seq - best.seq) < 0) best = candidate;
    }
    if (best === undefined) {
      // Nobody may take the slot (every waiting key runs its share): it stays free for a newcomer.
      this.active -= 1;
      return;
    }
    const queue = this.queues.get(best.key)!;
    const next = queue.shift()!;
    if (queue.length === 0) this.queues.delete(best.key);
    this.waitingCount -= 1;
    this.countRunning(best.key);
    next.resolve();
  }

  private countRunning(key: string): void {
    this.runningByKey.set(key, (this.runningByKey.get(key) ?? 0) + 1);
  }
}

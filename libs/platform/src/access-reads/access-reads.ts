import type { OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import {
  ACCESS_READS_FLUSH_MAX_MS,
  ACCESS_READS_PER_MESSAGE,
  isRecentReadDay,
  type AccessReadCount,
  type Scope,
} from '@svc/contracts';
import { int, type ConfigOf } from '../config/config';
import { PeriodicTask } from '../jobs/periodic-task';
import type { Logger } from 'pino';

export const ACCESS_READS_CONFIG = {
  ACCESS_READS_FLUSH_MS: int(
    "how often each replica writes the member-record reads it counted (the crew member's access history); at most a minute",
    { default: String(ACCESS_READS_FLUSH_MAX_MS), min: 100, max: ACCESS_READS_FLUSH_MAX_MS },
  ),
};
export type AccessReadsConfig = ConfigOf<typeof ACCESS_READS_CONFIG>;

// Not read from @svc/contracts: its barrel would put two more files on every metered read.
const DAY_MS = 86_400_000;

interface TallyEntry {
  readonly user_id: string;
  readonly client_id: string;
  readonly scope: Scope;
  readonly day: string;
  count: number;
  /** Milliseconds since the epoch: a number until it is handed over. */
  lastAt: number;
}

/**
 * The reads of members' records one replica counted since its last flush, per member, partner,
 * scope and UTC day: a Map update per read, no I/O. `take` hands them over and starts afresh;
 * `restore` puts back what could not be written, to go with the next flush.
 */
export class ReadTally {
  private counts = new Map<string, TallyEntry>();
  private day = '';
  private dayStartsAt = 0;

  count(userId: string, clientId: string, scope: Scope, now = Date.now()): void {
    // The day's name is worked out once a day, not per read.
    if (now < this.dayStartsAt || now >= this.dayStartsAt + DAY_MS) {
      this.dayStartsAt = now - (now % DAY_MS);
      this.day = new Date(this.dayStartsAt).toISOString().slice(0, 10);
    }
    this.add(userId, clientId, scope, this.day, 1, now);
  }

  get size(): number {
    return this.counts.size;
  }

  take(): AccessReadCount[] {
    const taken = [...this.counts.values()].map(({ lastAt, ...c }) => ({
      ...c,
      last_at: new Date(lastAt).toISOString(),
    }));
    this.counts = new Map();
    return taken;
  }

  restore(counts: readonly AccessReadCount[]): void {
    for (const c of counts) this.add(c.user_id, c.client_id, c.scope, c.day, c.count, Date.parse(c.last_at));
  }

  private add(userId: string, clientId: string, scope: Scope, day: string, count: number, at: number): void {
    const key = `${day}\n${userId}\n${clientId}\n${scope}`;
    const kept = this.counts.get(key);
    if (kept) {
      kept.count += count;
      if (at > kept.lastAt) kept.lastAt = at;
    } else {
      this.counts.set(key, { user_id: userId, client_id: clientId, scope, day, count, lastAt: at });
    }
  }
}

/**
 * Counts successful reads of members' records in memory and writes them in batches: on a timer
 * (ACCESS_READS_FLUSH_MS, at most a minute) and once more when the app shuts down gracefully
 * (onModuleDestroy, after the HTTP listener has drained and before messaging closes). A crash
 * loses at most the counts since the last flush. Each app says where the counts go (`write`).
 */
export abstract class AccessReadsRecorder implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly tally = new ReadTally();
  private readonly task: PeriodicTask;
  private flushing: Promise<void> = Promise.resolve();

  protected constructor(
    private readonly logger: Logger,
    flushEveryMs: number,
  ) {
    this.task = new PeriodicTask('access history flush', logger, flushEveryMs, () => this.flush());
  }

  /** Writes one batch (at most ACCESS_READS_PER_MESSAGE counts); throws when it was not written. */
  protected abstract write(counts: readonly AccessReadCount[]): Promise<void>;

  count(principal: { readonly user_id: string; readonly client_id: string }, scope: Scope): void {
    this.tally.count(principal.user_id, principal.client_id, scope);
  }

  /** Writes everything counted so far; what fails to be written is kept for the next flush. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.flushNow());
    return this.flushing;
  }

  private async flushNow(): Promise<void> {
    const now = Date.now();
    const taken = this.tally.take();
    // Kept over failed flushes past yesterday, a count can never be recorded (auth-server takes
    // today's and yesterday's only): it would stop every batch it travels in.
    const counts = taken.filter((c) => isRecentReadDay(c.day, now));
    if (counts.length < taken.length) {
      this.logger.error(
        { counts: taken.length - counts.length },
        'access history: counts older than yesterday dropped, never written',
      );
    }
    for (let i = 0; i < counts.length; i += ACCESS_READS_PER_MESSAGE) {
      const batch = counts.slice(i, i + ACCESS_READS_PER_MESSAGE);
      try {
        await this.write(batch);
      } catch (err) {
        const unwritten = counts.slice(i);
        this.tally.restore(unwritten);
        this.logger.warn(
          { err: err instanceof Error ? err.message : String(err), counts: unwritten.length },
          'access history: counts not written; kept for the next flush',
        );
        return;
      }
    }
  }

  onApplicationBootstrap(): void {
    this.task.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.task.stop();
    await this.flush();
    if (this.tally.size > 0) {
      this.logger.error({ counts: this.tally.size }, 'access history: counts lost at shutdown');
    }
  }
}

import type { BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';
import type { Logger } from 'pino';

/**
 * Housekeeping that every replica runs on a timer (pruning old rows): the first run comes at a
 * random point of the first period, so replicas started together do not run in step; a run that
 * fails is logged and the next one comes on time; `stop` lets a run in progress finish. The timer
 * never keeps the process alive.
 */
export class PeriodicTask {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;

  constructor(
    private readonly name: string,
    private readonly logger: Logger,
    private readonly everyMs: number,
    private readonly run: () => Promise<unknown>,
  ) {}

  start(): void {
    if (this.timer || this.stopped) return;
    this.schedule(Math.random() * this.everyMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** Whether `stop` was called: a long run checks it between batches. */
  get stopping(): boolean {
    return this.stopped;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.running = this.run()
        .then(() => undefined)
        .catch((err: unknown) =>
          this.logger.warn(
            { err: err instanceof Error ? err.message : String(err), task: this.name },
            `${this.name} failed; it runs again in ${Math.round(this.everyMs / 1000)} s`,
          ),
        )
        .finally(() => {
          if (!this.stopped) this.schedule(this.everyMs);
        });
    }, delayMs).unref();
  }
}

/** How often the pruners run, and how many rows one of their statements deletes at most. */
export const PRUNE_EVERY_MS = 10 * 60_000;
export const PRUNE_BATCH = 1000;

/**
 * Runs a batched delete (or any batch that reports how many rows it took) until a batch comes
 * back short or the task is stopping; returns the total.
 */
export async function drainBatches(
  batch: (limit: number) => Promise<number>,
  size: number,
  stopping: () => boolean,
): Promise<number> {
  let total = 0;
  for (;;) {
    const taken = await batch(size);
    total += taken;
    if (taken < size || stopping()) return total;
  }
}

/**
 * A Nest provider whose work is a PeriodicTask started with the app and stopped (the run in
 * progress finished) before it shuts down. Subclasses say what one run does and whether the work
 * is switched on (a retention of 0, say).
 */
export abstract class PeriodicWork implements OnApplicationBootstrap, BeforeApplicationShutdown {
  protected readonly task: PeriodicTask;

  protected constructor(name: string, logger: Logger, everyMs: number) {
    this.task = new PeriodicTask(name, logger, everyMs, () => this.runOnce());
  }

  protected abstract runOnce(): Promise<unknown>;

  protected enabled(): boolean {
    return true;
  }

  onApplicationBootstrap(): void {
    if (this.enabled()) this.task.start();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.task.stop();
  }
}

/** Deletes one batch of at most `limit` of the oldest rows past their age; answers how many went. */
export type PruneBatch = (limit: number) => Promise<number>;

/**
 * An app's tables that partner and member actions grow, pruned by every replica: each entry (what
 * to prune, its age in the statement) batch after batch until one comes back short, the
 * statements skipping rows another replica holds. An entry switched off answers 0.
 */
export class RetentionJob<K extends string = string> extends PeriodicWork {
  constructor(
    private readonly app: string,
    private readonly logger: Logger,
    private readonly entries: Readonly<Record<K, PruneBatch>>,
  ) {
    super('retention pruning', logger, PRUNE_EVERY_MS);
  }

  protected runOnce(): Promise<unknown> {
    return this.pruneOnce();
  }

  /** One pass over every entry, in order; answers (and logs) how many rows of each went. */
  async pruneOnce(): Promise<Record<K, number>> {
    const deleted: Record<string, number> = {};
    for (const [rows, prune] of Object.entries<PruneBatch>(this.entries)) {
      deleted[rows] = await drainBatches(prune, PRUNE_BATCH, () => this.task.stopping);
    }
    if (Object.values(deleted).some((n) => n > 0))
      this.logger.info(deleted, `${this.app}: pruned expired rows`);
    return deleted as Record<K, number>;
  }
}

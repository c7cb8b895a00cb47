import { drainBatches, PeriodicWork, PRUNE_BATCH, PRUNE_EVERY_MS } from '@svc/platform';
import type { Logger } from 'pino';

/** Deletes one batch of at most `limit` of the oldest rows past their age; answers how many went. */
export type PruneBatch = (limit: number) => Promise<number>;

/**
 * auth-server's tables that grow without bound, pruned by every replica: each entry (what to
 * prune, its age in the statement) batch after batch until one comes back short, the statements
 * skipping rows another replica holds.
 */
export class RetentionJob<K extends string = string> extends PeriodicWork {
  constructor(
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
      this.logger.info(deleted, 'auth-server: pruned expired rows');
    return deleted as Record<K, number>;
  }
}

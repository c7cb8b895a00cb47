import type { Logger } from 'pino';
import { drainBatches, PeriodicWork, PRUNE_BATCH, PRUNE_EVERY_MS } from '../jobs/periodic-task';
import type { OutboxRepository } from './outbox.repository';

export interface OutboxPrunerOptions {
  /** OUTBOX_RETENTION_DAYS: published messages older than this are deleted; 0 keeps them all. */
  readonly retentionDays: number;
  /** Pause between passes. */
  readonly everyMs?: number;
  readonly batchSize?: number;
}

/**
 * Keeps the outbox table from growing without bound: every pass deletes the published messages
 * older than the retention, a batch (one short transaction) at a time, so a backlog of old rows
 * never holds locks or a statement for long. Runs in every replica beside the relay; replicas
 * skip each other's locked rows.
 */
export class OutboxPruner extends PeriodicWork {
  constructor(
    private readonly repository: OutboxRepository,
    private readonly logger: Logger,
    private readonly options: OutboxPrunerOptions,
  ) {
    super('outbox pruning', logger, options.everyMs ?? PRUNE_EVERY_MS);
  }

  protected override enabled(): boolean {
    return this.options.retentionDays > 0;
  }

  protected runOnce(): Promise<unknown> {
    return this.pruneOnce();
  }

  /** One pass: deletes batches until one comes back short. Returns how many messages went. */
  async pruneOnce(): Promise<number> {
    const { retentionDays } = this.options;
    if (retentionDays === 0) return 0;
    const total = await drainBatches(
      (limit) => this.repository.prunePublished(retentionDays, limit),
      this.options.batchSize ?? PRUNE_BATCH,
      () => this.task.stopping,
    );
    if (total > 0) this.logger.info({ deleted: total, retention_days: retentionDays }, 'outbox: pruned');
    return total;
  }
}

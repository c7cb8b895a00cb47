import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';
import { drainBatches, PeriodicTask } from '../jobs/periodic-task';
import { OutboxRepository } from './outbox.repository';

export interface OutboxPrunerOptions {
  /** OUTBOX_RETENTION_DAYS: published messages older than this are deleted; 0 keeps them all. */
  readonly retentionDays: number;
  /** Pause between passes. */
  readonly everyMs?: number;
  readonly batchSize?: number;
}

const DEFAULT_EVERY_MS = 10 * 60_000;
const DEFAULT_BATCH_SIZE = 1000;

/**
 * Keeps the outbox table from growing without bound: every pass deletes the published messages
 * older than the retention, a batch (one short transaction) at a time, so a backlog of old rows
 * never holds locks or a statement for long. Runs in every replica beside the relay; replicas
 * skip each other's locked rows.
 */
export class OutboxPruner {
  private readonly repository = new OutboxRepository();
  private readonly task: PeriodicTask;

  constructor(
    private readonly dataSource: DataSource,
    private readonly logger: Logger,
    private readonly options: OutboxPrunerOptions,
  ) {
    this.task = new PeriodicTask('outbox pruning', logger, options.everyMs ?? DEFAULT_EVERY_MS, () =>
      this.pruneOnce(),
    );
  }

  start(): void {
    if (this.options.retentionDays > 0) this.task.start();
  }

  /** Lets the batch in progress finish; no new one starts. */
  stop(): Promise<void> {
    return this.task.stop();
  }

  /** One pass: deletes batches until one comes back short. Returns how many messages went. */
  async pruneOnce(): Promise<number> {
    const { retentionDays } = this.options;
    if (retentionDays === 0) return 0;
    const total = await drainBatches(
      (limit) => this.repository.prunePublished(this.dataSource.manager, retentionDays, limit),
      this.options.batchSize ?? DEFAULT_BATCH_SIZE,
      () => this.task.stopping,
    );
    if (total > 0) this.logger.info({ deleted: total, retention_days: retentionDays }, 'outbox: pruned');
    return total;
  }
}

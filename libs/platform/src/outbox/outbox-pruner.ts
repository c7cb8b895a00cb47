import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';
import { OutboxRepository } from './outbox.repository';

export interface OutboxPrunerOptions {
  /** OUTBOX_RETENTION_DAYS: published messages older than this are deleted; 0 keeps them all. */
  readonly retentionDays: number;
  /** Pause between passes; each replica starts at a random point of its first pause. */
  readonly everyMs?: number;
  readonly batchSize?: number;
}

const DEFAULT_EVERY_MS = 10 * 60_000;
const DEFAULT_BATCH_SIZE = 1000;

/**
 * Keeps the outbox table from growing without bound: every pass deletes the published messages
 * older than the retention, a batch (one short transaction) at a time, so a backlog of old rows
 * never holds locks or a statement for long. Runs in every replica beside the relay; replicas
 * skip each other's locked rows. A failed pass is logged and retried on the next one.
 */
export class OutboxPruner {
  private readonly repository = new OutboxRepository();
  private timer?: NodeJS.Timeout;
  private pass?: Promise<number>;
  private stopping = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly logger: Logger,
    private readonly options: OutboxPrunerOptions,
  ) {}

  start(): void {
    if (this.options.retentionDays === 0 || this.timer || this.stopping) return;
    this.schedule(Math.random() * this.everyMs());
  }

  /** Lets the batch in progress finish; no new one starts. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    await this.pass?.catch(() => 0);
  }

  /** One pass: deletes batches until one comes back short. Returns how many messages went. */
  async pruneOnce(): Promise<number> {
    const { retentionDays } = this.options;
    if (retentionDays === 0) return 0;
    const batchSize = this.options.batchSize ?? DEFAULT_BATCH_SIZE;
    let total = 0;
    for (;;) {
      const deleted = await this.repository.prunePublished(this.dataSource.manager, retentionDays, batchSize);
      total += deleted;
      if (deleted < batchSize || this.stopping) break;
    }
    if (total > 0) this.logger.info({ deleted: total, retention_days: retentionDays }, 'outbox: pruned');
    return total;
  }

  private everyMs(): number {
    return this.options.everyMs ?? DEFAULT_EVERY_MS;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.pass = this.pruneOnce();
      void this.pass
        .catch((err: unknown) =>
          this.logger.warn(
            { err: err instanceof Error ? err.message : String(err) },
            'outbox: prune pass failed; retrying on the next pass',
          ),
        )
        .finally(() => {
          if (!this.stopping) this.schedule(this.everyMs());
        });
    }, delayMs);
    this.timer.unref();
  }
}

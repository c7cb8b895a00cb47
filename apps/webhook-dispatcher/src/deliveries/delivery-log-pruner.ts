import { Inject, Injectable } from '@nestjs/common';
import {
  APP_CONFIG,
  APP_LOGGER,
  drainBatches,
  PeriodicWork,
  PRUNE_BATCH,
  PRUNE_EVERY_MS,
} from '@svc/platform';
import type { Logger } from 'pino';
import type { WebhookDispatcherConfig } from '../config';
import { DeliveriesRepository } from './deliveries.repository';

/**
 * Keeps the delivery log from growing without bound (a row per event and partner, and one per
 * attempt): finished deliveries older than WEBHOOK_LOG_RETENTION_DAYS are deleted with their
 * attempts, a batch at a time, in every replica. Pending ones are never touched. The endpoints'
 * hourly attempt counts go once no health reads them.
 */
@Injectable()
export class DeliveryLogPruner extends PeriodicWork {
  constructor(
    private readonly deliveries: DeliveriesRepository,
    @Inject(APP_CONFIG) private readonly config: Pick<WebhookDispatcherConfig, 'WEBHOOK_LOG_RETENTION_DAYS'>,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {
    super('delivery log pruning', logger, PRUNE_EVERY_MS);
  }

  protected override enabled(): boolean {
    return this.config.WEBHOOK_LOG_RETENTION_DAYS > 0;
  }

  protected runOnce(): Promise<unknown> {
    return this.pruneOnce();
  }

  /** One pass, batch after batch until one comes back short; returns how many deliveries went. */
  async pruneOnce(): Promise<number> {
    const days = this.config.WEBHOOK_LOG_RETENTION_DAYS;
    if (days === 0) return 0;
    const deleted = await drainBatches(
      (limit) => this.deliveries.pruneFinished(days, limit),
      PRUNE_BATCH,
      () => this.task.stopping,
    );
    if (deleted > 0) this.logger.info({ deleted, retention_days: days }, 'delivery log: pruned');
    await this.deliveries.pruneEndpointHours();
    return deleted;
  }
}

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
import { PartnerPortalRepository } from './partner-portal.repository';

/**
 * Keeps the record of portal actions from growing without bound (a row per click, refusals
 * included): rows older than PORTAL_ACTIONS_RETENTION_DAYS are deleted a batch at a time, in every
 * replica, as the delivery log is.
 */
@Injectable()
export class PortalActionsPruner extends PeriodicWork {
  constructor(
    private readonly portal: PartnerPortalRepository,
    @Inject(APP_CONFIG)
    private readonly config: Pick<WebhookDispatcherConfig, 'PORTAL_ACTIONS_RETENTION_DAYS'>,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {
    super('portal actions pruning', logger, PRUNE_EVERY_MS);
  }

  protected runOnce(): Promise<unknown> {
    return this.pruneOnce();
  }

  /** One pass, batch after batch until one comes back short; returns how many rows went. */
  async pruneOnce(): Promise<number> {
    const days = this.config.PORTAL_ACTIONS_RETENTION_DAYS;
    const deleted = await drainBatches(
      (limit) => this.portal.deleteOlderThan(days, limit),
      PRUNE_BATCH,
      () => this.task.stopping,
    );
    if (deleted > 0) this.logger.info({ deleted, retention_days: days }, 'portal actions: pruned');
    return deleted;
  }
}

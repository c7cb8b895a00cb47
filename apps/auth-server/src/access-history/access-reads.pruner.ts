import { Inject, Injectable } from '@nestjs/common';
import { APP_LOGGER, drainBatches, PeriodicWork, PRUNE_BATCH, PRUNE_EVERY_MS } from '@svc/platform';
import type { Logger } from 'pino';
import { AccessReadsRepository } from './access-reads.repository';

/** The history grows by a row per member, partner, scope and day: every replica drops days past 13 months. */
@Injectable()
export class AccessReadsPruner extends PeriodicWork {
  constructor(
    private readonly reads: AccessReadsRepository,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {
    super('access history pruning', logger, PRUNE_EVERY_MS);
  }

  protected runOnce(): Promise<unknown> {
    return this.pruneOnce();
  }

  async pruneOnce(): Promise<number> {
    const deleted = await drainBatches(
      (n) => this.reads.deleteExpired(n),
      PRUNE_BATCH,
      () => this.task.stopping,
    );
    if (deleted > 0) this.logger.info({ access_reads: deleted }, 'auth-server: pruned old access history');
    return deleted;
  }
}

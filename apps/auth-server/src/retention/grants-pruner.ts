import { Inject, Injectable } from '@nestjs/common';
import { APP_LOGGER, drainBatches, PeriodicWork, PRUNE_BATCH, PRUNE_EVERY_MS } from '@svc/platform';
import type { Logger } from 'pino';
import { GrantsRetentionRepository } from './grants-retention.repository';

/**
 * A day after expiry a replayed code is still refused as unknown, and the tokens it gave are long
 * rotated or expired; a pair's rotation history has nothing left to catch.
 */
export const EXPIRED_GRANT_GRACE_SECONDS = 24 * 60 * 60;

/** Each refresh adds a token pair, each authorization a code: every replica prunes expired ones. */
@Injectable()
export class GrantsPruner extends PeriodicWork {
  constructor(
    private readonly grants: GrantsRetentionRepository,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {
    super('expired grant pruning', logger, PRUNE_EVERY_MS);
  }

  protected runOnce(): Promise<unknown> {
    return this.pruneOnce();
  }

  /** One pass over both tables, batch after batch until one comes back short. */
  async pruneOnce(): Promise<{ codes: number; tokenPairs: number }> {
    const drain = (grants: 'codes' | 'tokenPairs') =>
      drainBatches(
        (n) => this.grants.deleteExpired(grants, EXPIRED_GRANT_GRACE_SECONDS, n),
        PRUNE_BATCH,
        () => this.task.stopping,
      );
    const codes = await drain('codes');
    const tokenPairs = await drain('tokenPairs');
    if (codes + tokenPairs > 0) {
      this.logger.info({ codes, token_pairs: tokenPairs }, 'auth-server: pruned expired grants');
    }
    return { codes, tokenPairs };
  }
}

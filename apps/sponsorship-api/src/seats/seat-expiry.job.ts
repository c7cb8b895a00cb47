import { Inject, Injectable } from '@nestjs/common';
import {
  APP_CONFIG,
  APP_LOGGER,
  drainBatches,
  PeriodicWork,
  PRUNE_BATCH,
  TransactionRunner,
} from '@svc/platform';
import type { Logger } from 'pino';
import type { SponsorshipApiConfig } from '../config';
import { EntitlementsClient } from '../entitlements/entitlements.client';
import { ProbeBudgetRepository } from './probe-budget.repository';
import { SeatsRepository } from './seats.repository';

const BATCH = 100;

/**
 * Ends seats at `expires_at` (active → ended, invited → cancelled) on every replica (SKIP LOCKED);
 * a batch whose premium cannot be dropped is retried next tick. Also prunes old charges and seats.
 */
@Injectable()
export class SeatExpiryJob extends PeriodicWork {
  constructor(
    private readonly seats: SeatsRepository,
    private readonly transactions: TransactionRunner,
    private readonly entitlements: EntitlementsClient,
    private readonly probeCharges: ProbeBudgetRepository,
    @Inject(APP_CONFIG) private readonly config: SponsorshipApiConfig,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {
    super('closing seats past their term', logger, config.SEAT_EXPIRY_INTERVAL);
  }

  protected override enabled(): boolean {
    return this.config.SEAT_EXPIRY_INTERVAL > 0;
  }

  /** Ends every seat that is due now; answers how many were closed. */
  override async runOnce(): Promise<number> {
    const closed = await drainBatches(
      (size) => this.expireBatch(size),
      BATCH,
      () => this.task.stopping,
    );
    if (closed > 0) this.logger.info({ closed }, 'seats past their term closed');
    // Charges older than the probe window count for nothing; the same task keeps them few.
    await this.probeCharges.prune();
    const days = this.config.SEAT_RETENTION_DAYS;
    const pruned = await drainBatches(
      (size) => this.seats.deleteClosed(days, size),
      PRUNE_BATCH,
      () => this.task.stopping,
    );
    if (pruned > 0)
      this.logger.info({ pruned, retention_days: days }, 'closed seats past their retention pruned');
    return closed;
  }

  private expireBatch(size: number): Promise<number> {
    return this.transactions.run(async (tx) => {
      const due = await this.seats.lockExpired(tx, size);
      if (due.length === 0) return 0;
      const active = due.filter((s) => s.status === 'active' && s.userId !== null);
      await this.entitlements.dropSeats(active);
      const invited = due.filter((s) => s.status === 'invited');
      await this.seats.close(tx, active, 'ended', 'system', 'expired');
      await this.seats.close(tx, invited, 'cancelled', 'system', 'expired');
      return due.length;
    });
  }
}

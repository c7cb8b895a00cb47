import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, APP_LOGGER, TransactionRunner } from '@svc/platform';
import type { Logger } from 'pino';
import type { SponsorshipApiConfig } from '../config';
import { EntitlementsClient } from '../entitlements/entitlements.client';
import { ProbeBudgetRepository } from './probe-budget.repository';
import { SeatsRepository } from './seats.repository';

const BATCH = 100;

/**
 * Ends seats at their `expires_at` (active → ended, premium dropped; an invitation nobody took up
 * → cancelled). Every replica runs it: each batch locks its seats with SKIP LOCKED, so replicas
 * share the work and never close one seat twice. A batch whose premium cannot be dropped rolls
 * back and is tried again on the next tick.
 */
@Injectable()
export class SeatExpiryJob implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private running?: Promise<number>;

  constructor(
    private readonly seats: SeatsRepository,
    private readonly transactions: TransactionRunner,
    private readonly entitlements: EntitlementsClient,
    private readonly probeCharges: ProbeBudgetRepository,
    @Inject(APP_CONFIG) private readonly config: SponsorshipApiConfig,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.SEAT_EXPIRY_INTERVAL <= 0) return;
    this.timer = setInterval(() => void this.tick(), this.config.SEAT_EXPIRY_INTERVAL);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** Ends every seat that is due now; answers how many were closed. */
  async runOnce(): Promise<number> {
    let total = 0;
    for (;;) {
      const closed = await this.expireBatch();
      total += closed;
      if (closed < BATCH) return total;
    }
  }

  private async tick(): Promise<void> {
    if (this.running) return;
    this.running = this.runOnce();
    try {
      const closed = await this.running;
      if (closed > 0) this.logger.info({ closed }, 'seats past their term closed');
      // Charges older than the probe window count for nothing; the same timer keeps them few.
      await this.probeCharges.prune();
    } catch (err) {
      this.logger.warn({ err }, 'closing seats past their term failed; retried on the next tick');
    } finally {
      this.running = undefined;
    }
  }

  private expireBatch(): Promise<number> {
    return this.transactions.run(async (tx) => {
      const due = await this.seats.lockExpired(tx, BATCH);
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

import { Inject, Injectable, Optional } from '@nestjs/common';
import { APP_CONFIG, APP_LOGGER, AppMetrics, type Transaction } from '@svc/platform';
import type { Counter } from 'prom-client';
import type { Logger } from 'pino';
import type { SponsorshipApiConfig } from '../config';
import { ProbeBudgetRepository } from './probe-budget.repository';
import { SeatsException } from './seats.exception';

/**
 * The probe budget: provisioning answers whether an e-mail belongs to a crew member (`active` or
 * `invited`), so provisioning and then removing seats would let a partner test addresses one
 * after another. A seat whose provision found a member and that closes within 24 hours is a probe
 * (charged when it closes); a partner with SPONSORSHIP_PROBE_BUDGET_PER_DAY probes in the last 24
 * hours may provision no new seat until the oldest of them leaves the window.
 *
 * The refusal covers every new provision of that partner, matched or not, and is decided before
 * anyone looks the e-mail up: refusing only the addresses that belong to members would turn the
 * 429 itself into the answer, free of charge and invisible to the member. Addresses of no member
 * never count against the budget, so a partner that keeps the seats it provisions is never refused.
 */
@Injectable()
export class ProbeBudgetService {
  private readonly refusals?: Counter;

  constructor(
    private readonly budget: ProbeBudgetRepository,
    @Inject(APP_CONFIG) private readonly config: SponsorshipApiConfig,
    @Inject(APP_LOGGER) private readonly logger: Logger,
    @Optional() metrics?: AppMetrics,
  ) {
    this.refusals = metrics?.counter(
      'sponsorship_probe_budget_refusals_total',
      'provisions refused with 429 because the partner spent its daily probe budget',
    );
  }

  /**
   * Throws `probe_budget_exceeded` (with the wait) when the partner has spent its budget. Run
   * inside the provision's transaction, after the partner's sponsor row is locked: provisions of
   * one partner are serialised there, and every replica reads the same committed charges.
   */
  async assertOpen(tx: Transaction, clientId: string): Promise<void> {
    const budget = this.config.SPONSORSHIP_PROBE_BUDGET_PER_DAY;
    const wait = await this.budget.secondsUntilOpen(tx, clientId, budget);
    if (wait === undefined) return;
    const retryAfter = Math.max(1, Math.ceil(wait));
    this.refusals?.inc();
    this.logger.warn(
      {
        client_id: clientId,
        probes_in_window: await this.budget.countInWindow(tx, clientId),
        budget,
        retry_after_s: retryAfter,
      },
      'provision refused: probe budget spent (seats of members closed within 24 h of provisioning)',
    );
    throw new SeatsException(
      'probe_budget_exceeded',
      `You closed ${budget} or more seats of crew members within a day of provisioning them in the last 24 hours. No new seat can be provisioned until the oldest of those leaves that window.`,
      retryAfter,
    );
  }
}

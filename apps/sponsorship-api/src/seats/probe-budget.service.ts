import { Inject, Injectable, Optional } from '@nestjs/common';
import { APP_CONFIG, APP_LOGGER, AppMetrics, type Transaction } from '@svc/platform';
import type { Counter } from 'prom-client';
import type { Logger } from 'pino';
import type { SponsorshipApiConfig } from '../config';
import { ProbeBudgetRepository } from './probe-budget.repository';
import { SeatsException } from './seats.exception';

/**
 * The probe budget: a provision tells whether an e-mail is a member's, so a seat that found a member
 * and closes within 24 hours is a probe. Over SPONSORSHIP_PROBE_BUDGET_PER_DAY, every new provision
 * is refused before the e-mail is looked up (refusing only members' would make the 429 the answer).
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

  /** Throws `probe_budget_exceeded` (with the wait); run under the partner's sponsor lock, so provisions serialise. */
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

import { Injectable } from '@nestjs/common';
import { Sql, type Transaction } from '@svc/platform';
import { PROBE_WINDOW } from './seats.repository';

/** The partner's probe charges (see `SeatsRepository.close`, which writes them). */
@Injectable()
export class ProbeBudgetRepository {
  constructor(private readonly sql: Sql) {}

  /** Seconds until the `budget`-th newest charge leaves the window; undefined while the budget is open. */
  async secondsUntilOpen(tx: Transaction, clientId: string, budget: number): Promise<number | undefined> {
    const charge = await this.sql.row<{ wait: string }>(
      `SELECT extract(epoch FROM charged_at + $3::interval - clock_timestamp())::text AS wait
         FROM probe_charges
        WHERE client_id = $1 AND charged_at > clock_timestamp() - $3::interval
        ORDER BY charged_at DESC
        OFFSET $2 LIMIT 1`,
      [clientId, budget - 1, PROBE_WINDOW],
      tx,
    );
    return charge ? Number(charge.wait) : undefined;
  }

  /** The partner's charges in the window now (for the refusal's log line). */
  async countInWindow(tx: Transaction, clientId: string): Promise<number> {
    const charges = await this.sql.row<{ n: string }>(
      `SELECT count(*)::text AS n FROM probe_charges
        WHERE client_id = $1 AND charged_at > clock_timestamp() - $2::interval`,
      [clientId, PROBE_WINDOW],
      tx,
    );
    return Number(charges!.n);
  }

  /** Charges that left the window count for nothing any more. */
  async prune(): Promise<number> {
    const gone = await this.sql.row<{ n: string }>(
      `WITH gone AS (DELETE FROM probe_charges WHERE charged_at <= clock_timestamp() - $1::interval RETURNING 1)
       SELECT count(*)::text AS n FROM gone`,
      [PROBE_WINDOW],
    );
    return Number(gone!.n);
  }
}

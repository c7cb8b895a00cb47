import { Injectable } from '@nestjs/common';
import { normaliseEmail, type ReconcileResponse } from '@svc/contracts';
import { TransactionRunner } from '@svc/platform';
import type { PartnerPrincipal } from '@svc/security';
import { EntitlementsClient } from '../entitlements/entitlements.client';
import type { ReconcileRequest } from './dto/reconcile.dto';
import { SeatsRepository } from './seats.repository';

/** Seats cancelled per transaction (and per entitlement call) when a reconcile is applied. */
export const CANCEL_BATCH = 1000;
/** Without `max_cancel`, the guard trips when the diff exceeds this share of the live seats. */
export const DEFAULT_SAFETY_FRACTION = 0.1;

/** The guard's ceiling (docs/rules.md): `max_cancel`, else max(1, ceil(10 % of the live seats)). */
export function cancelCeiling(activeSeats: number, maxCancel: number | undefined): number {
  return maxCancel ?? Math.max(1, Math.ceil(DEFAULT_SAFETY_FRACTION * activeSeats));
}

/**
 * Reconcile: one set-based diff (a dry run stops there), then batches that lock, drop premium and
 * close; a seat closed since the diff is skipped, so a retry is safe.
 */
@Injectable()
export class ReconcileService {
  constructor(
    private readonly seats: SeatsRepository,
    private readonly transactions: TransactionRunner,
    private readonly entitlements: EntitlementsClient,
  ) {}

  async reconcile(partner: PartnerPrincipal, request: ReconcileRequest): Promise<ReconcileResponse> {
    const diff = await this.seats.diff(
      partner.client_id,
      request.activeRefs,
      request.activeRefs.map(normaliseEmail),
    );
    const thresholdExceeded = diff.toCancel.length > cancelCeiling(diff.activeSeats, request.maxCancel);
    const answer: ReconcileResponse = {
      active_seats: diff.activeSeats,
      applied: false,
      cancelled_count: 0,
      missing_refs: diff.missingRefs,
      threshold_exceeded: thresholdExceeded,
      to_cancel: diff.toCancel.map((s) => ({ email: s.email, sponsorship_id: s.sponsorshipId })),
    };
    if (!request.apply || (thresholdExceeded && !request.overrideThreshold)) return answer;
    let cancelled = 0;
    for (let i = 0; i < diff.toCancel.length; i += CANCEL_BATCH) {
      const ids = diff.toCancel.slice(i, i + CANCEL_BATCH).map((s) => s.sponsorshipId);
      cancelled += await this.cancel(partner.client_id, ids);
    }
    return { ...answer, applied: true, cancelled_count: cancelled };
  }

  private cancel(clientId: string, ids: readonly string[]): Promise<number> {
    return this.transactions.run(async (tx) => {
      const live = await this.seats.lockLive(tx, clientId, ids);
      await this.entitlements.dropSeats(live);
      return (await this.seats.close(tx, live, 'cancelled', clientId, 'reconcile')).length;
    });
  }
}

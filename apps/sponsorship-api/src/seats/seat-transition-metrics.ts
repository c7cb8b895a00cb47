import { Injectable, Optional } from '@nestjs/common';
import { afterCommit, AppMetrics, type Transaction } from '@svc/platform';
import type { Counter } from 'prom-client';
import type { SeatChange } from './seat-event.entity';

/** The changes the service makes (provision, activation, remove, reconcile, member left, expiry). */
const KNOWN: readonly (readonly [string, string])[] = [
  ['none', 'invited'],
  ['invited', 'active'],
  ['invited', 'cancelled'],
  ['active', 'cancelled'],
  ['active', 'ended'],
];

/** `sponsorship_seat_transitions_total{from, to}` (`from` none for a new seat), counted once committed. */
@Injectable()
export class SeatTransitionMetrics {
  private readonly transitions?: Counter<'from' | 'to'>;

  constructor(@Optional() metrics?: AppMetrics) {
    this.transitions = metrics?.counter(
      'sponsorship_seat_transitions_total',
      'seat status changes (from is none for a new seat), counted when their transaction commits',
      ['from', 'to'],
    );
    for (const [from, to] of KNOWN) this.transitions?.inc({ from, to }, 0);
  }

  recorded(tx: Transaction, changes: readonly SeatChange[]): void {
    const transitions = this.transitions;
    if (!transitions) return;
    afterCommit(tx, () => {
      for (const c of changes) transitions.inc({ from: c.from ?? 'none', to: c.to });
    });
  }
}

import { Injectable, Optional } from '@nestjs/common';
import { AppMetrics, type Transaction } from '@svc/platform';
import type { Counter } from 'prom-client';
import { DataSource, type EntitySubscriberInterface, type QueryRunner } from 'typeorm';
import type { SeatChange } from './seat-event.entity';

const PENDING = 'seatTransitions';

/** The changes the service makes (provision, activation, remove, reconcile, member left, expiry). */
const KNOWN: readonly (readonly [string, string])[] = [
  ['none', 'invited'],
  ['invited', 'active'],
  ['invited', 'cancelled'],
  ['active', 'cancelled'],
  ['active', 'ended'],
];

/**
 * `sponsorship_seat_transitions_total{from, to}`: every seat status change written to
 * `seat_events`, `from` being `none` for a new seat. Counted once its transaction commits, so a
 * provision or removal that rolls back never shows.
 */
@Injectable()
export class SeatTransitionMetrics {
  private readonly transitions?: Counter<'from' | 'to'>;

  constructor(dataSource: DataSource, @Optional() metrics?: AppMetrics) {
    this.transitions = metrics?.counter(
      'sponsorship_seat_transitions_total',
      'seat status changes (from is none for a new seat), counted when their transaction commits',
      ['from', 'to'],
    );
    if (!this.transitions) return;
    for (const [from, to] of KNOWN) this.transitions.inc({ from, to }, 0);
    const subscriber: EntitySubscriberInterface = {
      afterTransactionCommit: ({ queryRunner }) => this.flush(queryRunner, true),
      afterTransactionRollback: ({ queryRunner }) => this.flush(queryRunner, false),
    };
    dataSource.subscribers.push(subscriber);
  }

  recorded(tx: Transaction, changes: readonly SeatChange[]): void {
    if (!this.transitions) return;
    const runner = tx.queryRunner;
    if (!runner?.isTransactionActive) return this.count(changes);
    const data = runner.data as { [PENDING]?: SeatChange[] };
    (data[PENDING] ??= []).push(...changes);
  }

  private flush(runner: QueryRunner, committed: boolean): void {
    const data = runner.data as { [PENDING]?: SeatChange[] };
    const pending = data[PENDING];
    if (!pending) return;
    delete data[PENDING];
    if (committed) this.count(pending);
  }

  private count(changes: readonly SeatChange[]): void {
    for (const c of changes) this.transitions?.inc({ from: c.from ?? 'none', to: c.to });
  }
}

import { Injectable } from '@nestjs/common';
import { CREW_EVENTS_EXCHANGE, type EventType, type ServiceEvent } from '@svc/contracts';
import { newId, OutboxRepository, TransactionRunner, type Transaction } from '@svc/platform';
import { RecordsException } from './records.exception';
import { RecordsRepository, type LockedMember } from './records.repository';
import type { Instant } from './sql-time';

/** What a write's work gets: its transaction, the locked member, the clock and the event list. */
export interface RecordWrite {
  readonly tx: Transaction;
  readonly member: LockedMember;
  /** Takes the write time and marks the record (with `vessels`, the vessel history) changed; skipped by a no-op write. */
  stamp(options?: { readonly vessels?: boolean }): Promise<Instant>;
  /** Announces the change: one `crew.events` message of this type, committed with the write. */
  emit(type: EventType): void;
}

/**
 * Every crew-record change (docs/rules.md, Record changes): one transaction that locks the member,
 * takes the write time under the lock, writes, and adds its events to the outbox.
 */
@Injectable()
export class RecordWriter {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly records: RecordsRepository,
    private readonly outbox: OutboxRepository,
  ) {}

  write<T>(userId: string, work: (write: RecordWrite) => Promise<T>): Promise<T> {
    return this.transactions.run(async (tx) => {
      const member = await this.records.lockMember(tx, userId);
      if (!member) throw new RecordsException('member_not_found', `There is no crew member ${userId}.`);
      let time: Instant | undefined;
      const events = new Set<EventType>();
      const result = await work({
        tx,
        member,
        stamp: async (options = {}) => {
          if (time) throw new Error('a record write takes its write time once');
          time = await this.records.stamp(tx, userId, options.vessels === true);
          return time;
        },
        emit: (type) => void events.add(type),
      });
      if (events.size > 0 && !time) throw new Error('an event needs the write time: stamp() first');
      for (const type of events) {
        const id = newId('evt');
        const event: ServiceEvent = { id, type, user_id: userId, created_at: time!.iso };
        await this.outbox.addEvent(tx, CREW_EVENTS_EXCHANGE, event);
      }
      return result;
    });
  }
}

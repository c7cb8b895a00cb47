import type { EventType } from '@svc/contracts';
import type { Transaction } from '@svc/platform';
import type { RecordWrite, RecordWriter } from '../../apps/crew-api/src/records/record-writer.service';
import type { LockedMember } from '../../apps/crew-api/src/records/records.repository';

/**
 * RecordWriter without a database, for service unit tests: the work runs against `member`, and
 * what it stamped and emitted is recorded (and dropped if the work throws, as a rollback would).
 */
export class FakeRecordWriter {
  stamps: { vessels: boolean }[] = [];
  events: EventType[] = [];
  private clock = Date.parse('2026-01-31T12:00:00Z');

  constructor(public member: LockedMember | undefined) {}

  write<T>(_userId: string, work: (write: RecordWrite) => Promise<T>): Promise<T> {
    if (!this.member) return Promise.reject(new Error('member_not_found'));
    const stamps: { vessels: boolean }[] = [];
    const events: EventType[] = [];
    const write: RecordWrite = {
      tx: {} as Transaction,
      member: this.member,
      stamp: (options = {}) => {
        stamps.push({ vessels: options.vessels === true });
        this.clock += 1;
        const iso = new Date(this.clock).toISOString();
        return Promise.resolve({ iso, exact: `${iso.slice(0, 23)}000Z` });
      },
      emit: (type) => void events.push(type),
    };
    return work(write).then((result) => {
      this.stamps.push(...stamps);
      this.events.push(...events);
      return result;
    });
  }

  asWriter(): RecordWriter {
    return this as unknown as RecordWriter;
  }
}

export const LOCKED_MEMBER: LockedMember = {
  userId: 'usr_1',
  email: 'kari@example.test',
  name: 'Kari',
  role: 'Bosun',
  country: 'NO',
  photoUrl: null,
  recordUpdatedAt: '2026-01-01T00:00:00.000Z',
};

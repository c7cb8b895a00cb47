import { DAY_MS } from '@svc/contracts';
import { FieldReader } from '@svc/platform';
import type { SeaTimeEntry } from '../sea-time-entry.entity';

export type SeaTimeEntryInput = Omit<SeaTimeEntry, 'id' | 'userId' | 'createdAt'>;

const FIELDS = ['date', 'days_at_sea', 'nautical_miles', 'role', 'verified'] as const;

/**
 * `POST /internal/v1/crew/{user_id}/sea-time-entries`: `date` from 1900 to tomorrow in UTC (a member
 * east of UTC logs their today); `verified` false when absent (crew-declared until confirmed).
 */
export function parseSeaTimeEntry(body: unknown, nowMs = Date.now()): SeaTimeEntryInput {
  const reader = FieldReader.body(body).onlyFields(FIELDS);
  const date = reader.date('date');
  if (reader.has('date')) {
    const latest = new Date(nowMs + DAY_MS).toISOString().slice(0, 10);
    if (date < '1900-01-01' || date > latest) reader.fail('date', `must be from 1900-01-01 to ${latest}`);
  }
  const entry: SeaTimeEntryInput = {
    date,
    daysAtSea: reader.integer('days_at_sea', 0, 366),
    nauticalMiles: reader.integer('nautical_miles', 0, 1_000_000),
    role: reader.string('role', { max: 100 }),
    verified: reader.optionalBoolean('verified') ?? false,
  };
  reader.done();
  return entry;
}

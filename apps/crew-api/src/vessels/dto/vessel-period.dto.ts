import { DAY_MS } from '@svc/contracts';
import { FieldReader } from '@svc/platform';
import { normaliseImo } from '../imo';
import type { VesselPeriod } from '../vessel-period-version.entity';

export type VesselPeriodPatch = Partial<VesselPeriod>;

const FIELDS = ['imo', 'name', 'role', 'period_start', 'period_end', 'days', 'nautical_miles'] as const;
const MAX_DAYS = 36_600;
const MAX_MILES = 10_000_000;

/** Whole days a period spans, rounded up: the default of `days`. */
export function spanDays(start: Date, end: Date): number {
  return Math.ceil((end.getTime() - start.getTime()) / DAY_MS);
}

function readImo(reader: FieldReader): string {
  const raw = reader.string('imo', { max: 20 });
  const imo = normaliseImo(raw);
  if (reader.has('imo') && raw !== '' && imo === undefined) {
    reader.fail('imo', 'must be an IMO number: 7 digits with a valid check digit, optionally after "IMO"');
  }
  return imo ?? raw;
}

/** `POST .../vessel-periods`: end not before start; `days` defaults to the days the period spans, rounded up. */
export function parseNewVesselPeriod(body: unknown): VesselPeriod {
  const reader = FieldReader.body(body).onlyFields(FIELDS);
  const imo = readImo(reader);
  const name = reader.string('name', { max: 200 });
  const role = reader.string('role', { max: 100 });
  const periodStart = reader.timestamp('period_start');
  const periodEnd = reader.timestamp('period_end');
  const days = reader.optionalInteger('days', 0, MAX_DAYS);
  const nauticalMiles = reader.integer('nautical_miles', 0, MAX_MILES);
  if (periodEnd.getTime() < periodStart.getTime())
    reader.fail('period_end', 'must not be before period_start');
  reader.done();
  return {
    imo,
    name,
    role,
    periodStart,
    periodEnd,
    days: days ?? spanDays(periodStart, periodEnd),
    nauticalMiles,
  };
}

/** `PATCH .../vessel-periods/{id}`: at least one field of a new period; fields not sent keep their value. */
export function parseVesselPeriodPatch(body: unknown): VesselPeriodPatch {
  const reader = FieldReader.body(body).onlyFields(FIELDS);
  if (!FIELDS.some((f) => reader.has(f)))
    reader.fail('body', `must contain at least one of ${FIELDS.join(', ')}`);
  const patch: VesselPeriodPatch = {
    imo: reader.has('imo') ? readImo(reader) : undefined,
    name: reader.optionalString('name', { max: 200 }),
    role: reader.optionalString('role', { max: 100 }),
    periodStart: reader.optionalTimestamp('period_start'),
    periodEnd: reader.optionalTimestamp('period_end'),
    days: reader.optionalInteger('days', 0, MAX_DAYS),
    nauticalMiles: reader.optionalInteger('nautical_miles', 0, MAX_MILES),
  };
  if (patch.periodStart && patch.periodEnd && patch.periodEnd.getTime() < patch.periodStart.getTime()) {
    reader.fail('period_end', 'must not be before period_start');
  }
  reader.done();
  return patch;
}

import type { VesselPeriodResponse } from '@svc/contracts';
import { usToMs } from '../../records/sql-time';
import type { PeriodRow, PeriodVersion } from '../vessels.repository';

/** What the internal API answers for a written period: the item, its version and write time. */
export interface WrittenPeriodResponse extends VesselPeriodResponse {
  readonly user_id: string;
  readonly version: number;
  readonly updated_at: string;
}

export function toVesselPeriodResponse(row: PeriodRow): VesselPeriodResponse {
  return {
    id: row.id,
    imo: row.imo,
    name: row.name,
    role: row.role,
    period_start: row.periodStart,
    period_end: row.periodEnd,
    days: row.days,
    nautical_miles: row.nauticalMiles,
  };
}

export function toWrittenPeriodResponse(v: PeriodVersion): WrittenPeriodResponse {
  return {
    id: v.id,
    user_id: v.userId,
    imo: v.imo,
    name: v.name,
    role: v.role,
    period_start: v.periodStart.toISOString(),
    period_end: v.periodEnd.toISOString(),
    days: v.days,
    nautical_miles: v.nauticalMiles,
    version: v.version,
    updated_at: usToMs(v.validFrom),
  };
}

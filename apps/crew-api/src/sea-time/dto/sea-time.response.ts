import type { RecentTrendResponse, SeaTimeResponse } from '@svc/contracts';
import type { SeaTimeEntry } from '../sea-time-entry.entity';
import type { RecentRow, SeaTimeVersion, TotalsRow } from '../sea-time.repository';
import { usToMs } from '../../records/sql-time';

/** What the internal API answers for a new entry. */
export interface SeaTimeEntryResponse {
  readonly id: string;
  readonly user_id: string;
  readonly date: string;
  readonly days_at_sea: number;
  readonly nautical_miles: number;
  readonly role: string;
  readonly verified: boolean;
  readonly created_at: string;
}

/** The totals of the record's version `version` (the version they were read as of). */
export function toSeaTimeResponse(row: TotalsRow, version: SeaTimeVersion): SeaTimeResponse {
  return {
    user_id: row.userId,
    record_updated_at: version.recordUpdatedAt.iso,
    totals: {
      days_at_sea: row.daysAtSea,
      nautical_miles: row.nauticalMiles,
      vessels_served: row.vesselsServed,
      years_active: row.yearsActive,
    },
    verified: { days_at_sea: row.verifiedDays, nautical_miles: row.verifiedMiles },
    by_role: row.byRole,
  };
}

/** The trend of the record's version `version` (the version it was read as of). */
export function toRecentResponse(row: RecentRow, version: SeaTimeVersion): RecentTrendResponse {
  return { user_id: row.userId, record_updated_at: version.recordUpdatedAt.iso, months: row.months };
}

export function toSeaTimeEntryResponse(entry: SeaTimeEntry): SeaTimeEntryResponse {
  return {
    id: entry.id,
    user_id: entry.userId,
    date: entry.date,
    days_at_sea: entry.daysAtSea,
    nautical_miles: entry.nauticalMiles,
    role: entry.role,
    verified: entry.verified,
    created_at: usToMs(entry.createdAt),
  };
}

/** A vessel period as the member records it. */
export interface VesselPeriod {
  /** Seven digits, the last a check digit. */
  readonly imo: string;
  readonly name: string;
  readonly role: string;
  readonly periodStart: Date;
  readonly periodEnd: Date;
  readonly days: number;
  readonly nauticalMiles: number;
}

/**
 * One version of a vessel period (a row of `vessel_period_versions`). Versions are never updated
 * except to close them: an amendment sets the current version's `valid_to` to the write time and
 * inserts version + 1 with that `valid_from`. The versions valid at an instant T
 * (`valid_from <= T < valid_to`) are the periods as they were at T.
 */
export interface PeriodVersion extends VesselPeriod {
  /** `vp_…` (`period_id`), stable across versions. */
  readonly id: string;
  readonly version: number;
  readonly userId: string;
  /** The write time (µs). */
  readonly validFrom: string;
}

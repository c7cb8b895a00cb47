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

/** A `vessel_period_versions` row: an amendment closes it (`valid_to`) and adds version + 1 from that instant. */
export interface PeriodVersion extends VesselPeriod {
  /** `vp_…` (`period_id`), stable across versions. */
  readonly id: string;
  readonly version: number;
  readonly userId: string;
  /** The write time (µs). */
  readonly validFrom: string;
}

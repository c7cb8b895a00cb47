/** One crew-declared line of sea time (a row of `sea_time_entries`). */
export interface SeaTimeEntry {
  /** `ste_…` */
  readonly id: string;
  readonly userId: string;
  /** Calendar date (`YYYY-MM-DD`); the 12-month trend groups entries by its month. */
  readonly date: string;
  readonly daysAtSea: number;
  readonly nauticalMiles: number;
  readonly role: string;
  /** Marks the independently confirmed entries. */
  readonly verified: boolean;
  /** Write time (µs). */
  readonly createdAt: string;
}

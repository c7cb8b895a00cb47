/**
 * A crew member's record head (a row of `crew_members`) as the app reads it: the profile and the
 * record's latest change. The row also holds `vessels_updated_at` (the latest vessel-period change,
 * a vessel-history scan's `as_of`) and `created_at`, which queries read in SQL only.
 */
export interface CrewMember {
  /** The same id as the member's sign-in identity in auth-server (`usr_…`). */
  readonly userId: string;
  /** Trimmed and lower-cased. */
  readonly email: string;
  readonly name: string;
  readonly role: string;
  readonly country: string;
  readonly photoUrl: string | null;
  /** Write time of the latest change of any part of the record, as shown (ms). */
  readonly recordUpdatedAt: string;
}

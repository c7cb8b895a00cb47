/** A `crew_members` row as the app reads it (`vessels_updated_at` and `created_at` are read in SQL only). */
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

/** How the member holds their tier (a row of `memberships`). */
export interface Membership {
  readonly userId: string;
  readonly tier: 'free' | 'premium';
  readonly source: 'self' | 'sponsored' | 'vessel';
  readonly since: Date;
  /** The sponsoring partner of a sponsored membership. */
  readonly sponsorClientId: string | null;
  /** The seat (sponsorship-api) of a sponsored membership. */
  readonly sponsorshipId: string | null;
  readonly expiresAt: Date | null;
  /** The seat whose premium was dropped last: a repeated drop for that seat reports the drop again. */
  readonly droppedSponsorshipId: string | null;
}

import { type SEAT_STATUS_VALUES } from '@svc/contracts';

export type SeatStatus = (typeof SEAT_STATUS_VALUES)[number];
/** Seats that still hold a place (and, when active, premium): reconcile compares only these. */
export const LIVE_STATUSES: readonly SeatStatus[] = ['invited', 'active'];

/** A `seats` row; `invitedAtExact` (µs, UTC) is the list's keyset value. */
export interface SeatRow {
  readonly sponsorshipId: string;
  readonly clientId: string;
  /** Trimmed and lower-cased. */
  readonly email: string;
  readonly externalRef: string | null;
  readonly status: SeatStatus;
  /** The crew member, once one has this e-mail. */
  readonly userId: string | null;
  readonly crewName: string | null;
  readonly invitedAt: Date;
  readonly invitedAtExact: string;
  readonly activatedAt: Date | null;
  readonly expiresAt: Date;
}

/** A partner that provisions seats (a row of `sponsors`): its display name and quota, if any. */
export interface Sponsor {
  readonly clientId: string;
  readonly name: string | null;
  readonly seatQuota: number | null;
}

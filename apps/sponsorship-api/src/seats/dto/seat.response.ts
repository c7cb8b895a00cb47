import type { SeatRow } from '../seats.repository';
import type { SeatStatus } from '../seat.entity';

/** A sponsored seat as partners see it (docs/rules.md, Sponsored seat). */
export interface SeatResponse {
  readonly sponsorship_id: string;
  readonly email: string;
  readonly crew_name: string | null;
  readonly status: SeatStatus;
  readonly external_ref: string | null;
  readonly invited_at: string | null;
  readonly activated_at: string | null;
  readonly expires_at: string | null;
}

/**
 * `connected`: the members connected to (consenting to) the calling partner now. The name is shown
 * only for those; to anyone else it would say who owns an address the partner merely typed in.
 */
export function toSeatResponse(seat: SeatRow, connected: ReadonlySet<string>): SeatResponse {
  return {
    sponsorship_id: seat.sponsorshipId,
    email: seat.email,
    crew_name: seat.userId !== null && connected.has(seat.userId) ? seat.crewName : null,
    status: seat.status,
    external_ref: seat.externalRef,
    invited_at: seat.invitedAt.toISOString(),
    activated_at: seat.activatedAt?.toISOString() ?? null,
    expires_at: seat.expiresAt.toISOString(),
  };
}

export interface SeatListResponse {
  readonly items: SeatResponse[];
  readonly next_cursor: string | null;
}

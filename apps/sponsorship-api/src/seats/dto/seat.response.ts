import type { SeatResponse } from '@svc/contracts';
import type { SeatRow } from '../seats.repository';

/** The name only for `connected` members: to others it would say who owns an address the partner typed in. */
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

import type { SeatResponse } from '@svc/contracts';
import type { SeatRow } from '../seats.repository';

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

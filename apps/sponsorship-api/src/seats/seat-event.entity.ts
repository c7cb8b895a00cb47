import type { SeatStatus } from './seat.entity';

/** One status change of a seat (a row of `seat_events`): who (a partner's client_id, or `system`) and why. */
export interface SeatChange {
  readonly sponsorshipId: string;
  readonly from: SeatStatus | null;
  readonly to: SeatStatus;
  readonly actor: string;
  readonly reason: string;
}

import { API_LIMITS, SEAT_STATUS_VALUES } from '@svc/contracts';
import { decodeCursorFields, encodeCursorFields, isExactInstant } from '@svc/platform';
import type { SeatStatus } from '../seat.entity';
import { SeatsException } from '../seats.exception';
import type { ListPosition } from '../seats.repository';

/** `base64url(JSON {t: invited_at µs, id, s: status filter})`; unsigned: a forged one reads only the caller's seats. */
export interface SeatCursor extends ListPosition {
  readonly status: SeatStatus | null;
}

const ID = /^[A-Za-z0-9_-]{1,100}$/;

function invalid(): SeatsException {
  return new SeatsException(
    'invalid_cursor',
    'The cursor is not one this API issued for this list; start again from the first page.',
  );
}

export function encodeSeatCursor(cursor: SeatCursor): string {
  return encodeCursorFields({ t: cursor.invitedAt, id: cursor.sponsorshipId, s: cursor.status });
}

export function decodeSeatCursor(text: string): SeatCursor {
  const c = decodeCursorFields(text, API_LIMITS.seatCursorMaxLength);
  const status = c?.s;
  if (
    !c ||
    !isExactInstant(c.t) ||
    typeof c.id !== 'string' ||
    !ID.test(c.id) ||
    !(
      status === null ||
      (typeof status === 'string' && (SEAT_STATUS_VALUES as readonly string[]).includes(status))
    )
  ) {
    throw invalid();
  }
  return { invitedAt: c.t, sponsorshipId: c.id, status: status as SeatStatus | null };
}

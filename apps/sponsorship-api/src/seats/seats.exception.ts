/** What can go wrong with a seat, without HTTP: the problem mapper decides the answer. */
export type SeatsErrorCode =
  | 'seat_not_found'
  | 'external_ref_taken'
  | 'quota_exceeded'
  | 'entitlement_write_failed'
  | 'invalid_cursor'
  | 'empty_active_refs'
  | 'member_not_identified';

export class SeatsException extends Error {
  constructor(
    readonly code: SeatsErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'SeatsException';
  }
}

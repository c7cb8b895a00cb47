import { DomainException } from '@svc/platform';

/** What can go wrong with a seat, without HTTP: the problem mapper decides the answer. */
export type SeatsErrorCode =
  | 'seat_not_found'
  | 'external_ref_taken'
  | 'quota_exceeded'
  | 'entitlement_write_failed'
  | 'invalid_cursor'
  | 'empty_active_refs'
  | 'member_not_identified'
  | 'probe_budget_exceeded';

export class SeatsException extends DomainException<SeatsErrorCode> {
  constructor(
    code: SeatsErrorCode,
    message: string,
    /** Seconds the caller should wait before trying again, where waiting helps. */
    readonly retryAfterSeconds?: number,
  ) {
    super(code, message);
  }
}

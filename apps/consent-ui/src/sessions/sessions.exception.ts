import { DomainException } from '@svc/platform';

/** Why a state-changing request of a browser was refused. No HTTP in here: see errors.ts. */
export type SessionErrorCode =
  /** No live session (never signed in, signed out, or expired). */
  | 'session_required'
  /** The form's CSRF token is missing or is not this session's. */
  | 'csrf_mismatch';

export class SessionException extends DomainException<SessionErrorCode> {
  constructor(code: SessionErrorCode) {
    super(code, code === 'session_required' ? 'no live session' : 'CSRF token missing or wrong');
  }
}

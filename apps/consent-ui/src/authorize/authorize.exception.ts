import { DomainException } from '@svc/platform';

/** Why a consent decision could not be taken. No HTTP in here: see errors.ts. */
export type AuthorizeErrorCode =
  /** The form carried no decision, or one that is neither allow nor deny. */
  'invalid_decision';

export class AuthorizeException extends DomainException<AuthorizeErrorCode> {
  constructor(code: AuthorizeErrorCode) {
    super(code, 'the consent form carried no valid decision');
  }
}

/** Why a consent decision could not be taken. No HTTP in here: see errors.ts. */
export type AuthorizeErrorCode =
  /** The form carried no decision, or one that is neither allow nor deny. */
  'invalid_decision';

export class AuthorizeException extends Error {
  constructor(readonly code: AuthorizeErrorCode) {
    super('the consent form carried no valid decision');
    this.name = 'AuthorizeException';
  }
}

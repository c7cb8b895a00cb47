import { DomainException } from '@svc/platform';

/** Why a disconnect did not happen. No HTTP in here: see errors.ts. */
export type ConnectionsErrorCode =
  /**
   * auth-server could not make the revocation visible to every replica (its token cache), so it
   * refused rather than leave a token that still works somewhere; trying again is safe.
   */
  'disconnect_unavailable';

export class ConnectionsException extends DomainException<ConnectionsErrorCode> {
  constructor(code: ConnectionsErrorCode) {
    super(code, 'the partner could not be disconnected right now');
  }
}

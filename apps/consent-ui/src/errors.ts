import type { AuthRpcError } from '@svc/contracts';
import { ApiProblem, assertUnreachable, RpcRemoteError } from '@svc/platform';
import { AuthorizeException } from './authorize/authorize.exception';
import { ConnectionsException } from './connections/connections.exception';
import { SessionException } from './sessions/sessions.exception';

/**
 * consent-ui's feature exceptions for the platform's error filter. The browser only sees the page
 * of views/error-page.view.ts, so a code here just picks the status.
 */
export function mapConsentUiError(error: unknown): ApiProblem | undefined {
  if (error instanceof SessionException) {
    switch (error.code) {
      case 'session_required':
        return new ApiProblem('insufficient_scope', 'Signing in is required for this action.');
      case 'csrf_mismatch':
        return new ApiProblem('insufficient_scope', 'The form’s CSRF token is missing or wrong.');
      default:
        return assertUnreachable(error.code);
    }
  }
  if (error instanceof AuthorizeException) {
    switch (error.code) {
      case 'invalid_decision':
        return new ApiProblem('bad_request', 'The consent form carried no valid decision.');
      default:
        return assertUnreachable(error.code);
    }
  }
  if (error instanceof ConnectionsException) {
    switch (error.code) {
      case 'disconnect_unavailable':
        return new ApiProblem('service_unavailable', 'The partner could not be disconnected right now.');
      default:
        return assertUnreachable(error.code);
    }
  }
  if (isTemporarilyUnavailable(error)) {
    return new ApiProblem('service_unavailable', 'auth-server cannot answer this right now.');
  }
  return undefined;
}

const TEMPORARILY_UNAVAILABLE: AuthRpcError = 'temporarily_unavailable';

/** auth-server answered `temporarily_unavailable` (as a string or a field: any mention counts). */
export function isTemporarilyUnavailable(error: unknown): boolean {
  if (!(error instanceof RpcRemoteError)) return false;
  const remote = error.remote;
  if (typeof remote === 'string') return remote.includes(TEMPORARILY_UNAVAILABLE);
  if (typeof remote !== 'object' || remote === null) return false;
  // Cannot throw: RpcRemoteError's constructor already put this JSON in its message.
  return JSON.stringify(remote).includes(TEMPORARILY_UNAVAILABLE);
}

import type { AuthRpcError } from '@svc/contracts';
import { ApiProblem, RpcRemoteError } from '@svc/platform';
import { domainError } from './views/error-page.view';

/**
 * consent-ui's feature exceptions for the platform's error filter. The browser only sees the page
 * of views/error-page.view.ts, so a code here just picks the status.
 */
export function mapConsentUiError(error: unknown): ApiProblem | undefined {
  const domain = domainError(error);
  if (domain) return new ApiProblem(domain.code, domain.detail);
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

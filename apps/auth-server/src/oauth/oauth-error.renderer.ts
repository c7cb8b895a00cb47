import { ApiProblem, assertUnreachable, type ErrorRenderer } from '@svc/platform';
import { presentsBasic } from '../tokens/dto/token-form.dto';
import { OAuthException } from './oauth.exception';

/** An OAuth error's status for the platform (an expected answer, not logged); rendered below. */
export function oauthProblem(error: unknown): ApiProblem | undefined {
  if (!(error instanceof OAuthException)) return undefined;
  switch (error.code) {
    case 'invalid_client':
      return new ApiProblem('invalid_token', error.message);
    case 'invalid_request':
    case 'invalid_grant':
    case 'invalid_scope':
    case 'unsupported_grant_type':
      return new ApiProblem('bad_request', error.message);
    default:
      return assertUnreachable(error.code);
  }
}

/** The RFC 6749 §5.2 (or RFC 6750 §3.1) code of a refusal the platform or a guard raised. */
function codeOfStatus(status: number): string {
  if (status === 401) return 'invalid_token';
  if (status === 403) return 'insufficient_scope';
  if (status === 500) return 'server_error';
  // A dependency down or slow, or the failed-authentication limit's 429 (as the gateway's own
  // limit_req refusal on /oauth/*, with Retry-After).
  if (status === 429 || status > 500) return 'temporarily_unavailable';
  return 'invalid_request';
}

/**
 * OAuth endpoints answer errors in the RFC 6749 §5.2 shape, never as Problem Details. Statuses
 * the platform chose (405 with Allow, 413, 503) are kept.
 */
export const oauthErrorRenderer: ErrorRenderer = (error, problem, request, reply) => {
  const path = request.url.split('?')[0];
  if (!path.startsWith('/oauth/') && !path.startsWith('/.well-known/')) return false;
  const code = error instanceof OAuthException ? error.code : codeOfStatus(problem.status);
  // A body the token endpoint cannot read is a malformed request (RFC 6749 §5.2), not a 415.
  reply.status(problem.status === 415 ? 400 : problem.status);
  for (const [name, value] of Object.entries(problem.extras.headers ?? {})) reply.header(name, value);
  // RFC 6749 §5.2: a client that authenticated with the Authorization header gets its challenge.
  if (code === 'invalid_client' && presentsBasic(request.headers.authorization)) {
    reply.header('www-authenticate', 'Basic realm="oauth"');
  }
  reply.header('x-request-id', request.id);
  reply.header('cache-control', 'no-store');
  reply.header('pragma', 'no-cache');
  reply.header('content-type', 'application/json; charset=utf-8');
  void reply.send(JSON.stringify({ error: code, error_description: asciiDescription(problem.detail) }));
  return true;
};

/**
 * RFC 6749 §5.2: `error_description` holds only %x20-21 / %x23-5B / %x5D-7E. Messages shared with
 * the Problem Details answers may cite "§" or quote; they are spelled in those characters here.
 */
function asciiDescription(text: string): string {
  return text
    .replace(/§/g, 'section ')
    .replace(/["\u201c\u201d\u2018\u2019]/g, "'")
    .replace(/\\/g, '/')
    .replace(/[^\x20-\x21\x23-\x5B\x5D-\x7E]/g, '');
}

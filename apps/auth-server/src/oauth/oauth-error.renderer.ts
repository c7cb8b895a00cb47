import type { ApiProblem, ErrorRenderer } from '@svc/platform';
import { OAuthException, type OAuthErrorCode } from './oauth.exception';

/** Which RFC 6749/6750 code answers a problem the platform classified. */
function codeFor(problem: ApiProblem): OAuthErrorCode {
  switch (problem.code) {
    case 'invalid_token':
      return 'invalid_token';
    case 'insufficient_scope':
      return 'insufficient_scope';
    case 'service_unavailable':
    case 'bad_gateway':
    case 'gateway_timeout':
      return 'temporarily_unavailable';
    case 'internal_error':
    case 'entitlement_write_failed':
      return 'server_error';
    case 'bad_request':
    case 'not_found':
    case 'method_not_allowed':
    case 'conflict':
    case 'webhook_not_registered':
    case 'seat_quota_exceeded':
    case 'payload_too_large':
    case 'unsupported_media_type':
    case 'invalid_request':
      return 'invalid_request';
    // As the gateway's own limit_req refusal on /oauth/*: a 429 with Retry-After.
    case 'rate_limit_exceeded':
      return 'temporarily_unavailable';
  }
}

/**
 * OAuth endpoints answer errors in the RFC 6749 §5.2 shape, never as Problem Details
 * (interface.md, Errors). Statuses the platform chose (405 with Allow, 413, 503) are kept.
 */
export const oauthErrorRenderer: ErrorRenderer = (error, problem, request, reply) => {
  const path = request.url.split('?')[0];
  if (!path.startsWith('/oauth/') && !path.startsWith('/.well-known/')) return false;
  let status: number;
  let code: OAuthErrorCode;
  let description: string;
  let headers: Readonly<Record<string, string>>;
  if (error instanceof OAuthException) {
    ({ status, code, description, headers } = error);
  } else {
    code = codeFor(problem);
    // A body the token endpoint cannot read is a malformed request (RFC 6749 §5.2), not a 415.
    status = problem.status === 415 ? 400 : problem.status;
    description = problem.detail;
    headers = problem.extras.headers ?? {};
  }
  reply.status(status);
  for (const [name, value] of Object.entries(headers)) reply.header(name, value);
  reply.header('x-request-id', request.id);
  reply.header('cache-control', 'no-store');
  reply.header('pragma', 'no-cache');
  reply.header('content-type', 'application/json; charset=utf-8');
  void reply.send(JSON.stringify({ error: code, error_description: asciiDescription(description) }));
  return true;
};

/**
 * RFC 6749 §5.2: `error_description` holds only %x20-21 / %x23-5B / %x5D-7E. Messages shared with
 * the Problem Details answers may cite "§" or quote; they are spelled in those characters here.
 */
export function asciiDescription(text: string): string {
  return text
    .replace(/§/g, 'section ')
    .replace(/["\u201c\u201d]/g, "'")
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/\\/g, '/')
    .replace(/[^\x20-\x21\x23-\x5B\x5D-\x7E]/g, '');
}

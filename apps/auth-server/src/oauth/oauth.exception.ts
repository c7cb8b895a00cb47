import type { ProblemCode } from '@svc/contracts';

/** Error codes of RFC 6749 §4.1.2.1 and §5.2, RFC 6750 §3.1 and RFC 7009 §2.2.1 that this server uses. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'server_error'
  | 'temporarily_unavailable'
  | 'invalid_token'
  | 'insufficient_scope';

/** Thrown by the OAuth features; the OAuth error renderer turns it into `{error, error_description}`. */
export class OAuthException extends Error {
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(`${code}: ${description}`);
    this.name = 'OAuthException';
  }

  get status(): number {
    return oauthStatus(this.code);
  }
}

export function oauthStatus(code: OAuthErrorCode): number {
  switch (code) {
    case 'invalid_client':
    case 'invalid_token':
      return 401;
    case 'insufficient_scope':
      return 403;
    case 'server_error':
      return 500;
    case 'temporarily_unavailable':
      return 503;
    case 'invalid_request':
    case 'invalid_grant':
    case 'unsupported_grant_type':
    case 'unsupported_response_type':
    case 'invalid_scope':
    case 'access_denied':
      return 400;
  }
}

/**
 * What an OAuth error is in the platform's terms, so the error filter treats it as an expected
 * answer (not logged as a failure); the OAuth renderer still answers in RFC 6749 form.
 */
export function oauthProblemCode(code: OAuthErrorCode): ProblemCode {
  switch (code) {
    case 'invalid_client':
    case 'invalid_token':
      return 'invalid_token';
    case 'insufficient_scope':
      return 'insufficient_scope';
    case 'server_error':
      return 'internal_error';
    case 'temporarily_unavailable':
      return 'service_unavailable';
    case 'invalid_request':
    case 'invalid_grant':
    case 'unsupported_grant_type':
    case 'unsupported_response_type':
    case 'invalid_scope':
    case 'access_denied':
      return 'bad_request';
  }
}

import { DomainException } from '@svc/platform';

/** The RFC 6749 §5.2 errors the token and revocation endpoints' features raise. */
export type OAuthErrorCode =
  'invalid_request' | 'invalid_client' | 'invalid_grant' | 'invalid_scope' | 'unsupported_grant_type';

/** An OAuth refusal, without HTTP: the mappers in oauth-error.renderer.ts decide the answer. */
export class OAuthException extends DomainException<OAuthErrorCode> {}

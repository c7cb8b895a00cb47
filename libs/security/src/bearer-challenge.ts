import { ApiProblem } from '@svc/platform';

/*
 * RFC 6750 §3, docs/rules.md "Errors and auth on resource endpoints": challenges without a realm
 * or an error_description, the exact header shape partners are told to expect.
 */

export interface RequestCredentials {
  readonly headers: { readonly authorization?: string };
  readonly query?: unknown;
  readonly body?: unknown;
}

function hasAccessTokenParameter(bag: unknown): boolean {
  return typeof bag === 'object' && bag !== null && 'access_token' in bag;
}

/**
 * RFC 6750 §3.1: no bearer credentials (or an unsupported method) get a challenge without an
 * error code; a bad bearer token gets `error="invalid_token"`.
 */
export function unauthenticatedProblem(request: RequestCredentials): ApiProblem {
  // Scheme names are case-insensitive (RFC 9110 §11.1).
  if (/^bearer(?:\s|$)/i.test(request.headers.authorization?.trim() ?? '')) {
    return new ApiProblem(
      'invalid_token',
      'The access token is malformed, unknown, expired or revoked; obtain a new one.',
      { headers: { 'www-authenticate': 'Bearer error="invalid_token"' } },
    );
  }
  const inParameter = hasAccessTokenParameter(request.query) || hasAccessTokenParameter(request.body);
  return new ApiProblem(
    'invalid_token',
    inParameter
      ? 'Access tokens are accepted only in the Authorization header (`Authorization: Bearer <token>`), ' +
          'never as an access_token parameter (RFC 6750 §2.1, §5.3).'
      : 'This endpoint needs an access token: send `Authorization: Bearer <token>` (RFC 6750 §2.1).',
    { headers: { 'www-authenticate': 'Bearer' } },
  );
}

/** 403 `insufficient_scope` naming every scope the endpoint needs (RFC 6750 §3.1). */
export function insufficientScopeProblem(required: readonly string[]): ApiProblem {
  const scopes = required.join(' ');
  return new ApiProblem(
    'insufficient_scope',
    `This endpoint needs an access token with the scope${required.length > 1 ? 's' : ''} ${scopes}.`,
    { headers: { 'www-authenticate': `Bearer error="insufficient_scope", scope="${scopes}"` } },
  );
}

import { httpDate, isNotModified, strongEtag, type Validators } from '@svc/platform';
import type { Principal } from '@svc/security';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** A token's scopes in a canonical order, for validators (the ETag depends on them). */
export function scopeKey(principal: { readonly scopes: readonly string[] }): string {
  return [...principal.scopes].sort().join(' ');
}

/** A strong ETag of `parts` for this caller: the body depends on the token's scopes and its client. */
export function callerEtag(principal: Principal, ...parts: string[]): string {
  return strongEtag(...parts, scopeKey(principal), principal.client_id);
}

/** A response body with the validators of its representation. */
export interface Representation<T> extends Validators {
  readonly body: T;
}

/**
 * Conditional GET (RFC 9110 §13): always `ETag`, `Last-Modified` and `Cache-Control: private,
 * no-cache` (the body depends on the caller's token, and a cache must revalidate every time);
 * `If-None-Match`, or else `If-Modified-Since`, that still matches is answered 304 without a
 * body (§15.4.5). Returns the body to send, or undefined for a 304.
 */
export function answerConditionally<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  representation: Representation<T>,
): T | undefined {
  reply
    .header('etag', representation.etag)
    .header('last-modified', httpDate(representation.lastModified))
    .header('cache-control', 'private, no-cache');
  if (isNotModified(request.headers, representation)) {
    reply.status(304);
    return undefined;
  }
  return representation.body;
}

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

/**
 * A response's validators, and its body to build only when it is sent: a request whose validator
 * still matches is answered from the validators alone, without the work of the body.
 */
export interface Representation<T> extends Validators {
  readonly body: () => T | Promise<T>;
}

/**
 * Conditional GET (RFC 9110 §13): always `ETag`, `Last-Modified` and `Cache-Control: private,
 * no-cache` (the body depends on the caller's token, and a cache must revalidate every time);
 * `If-None-Match`, or else `If-Modified-Since`, that still matches is answered 304 without a
 * body (§15.4.5). Resolves the body to send, or undefined for a 304.
 */
export async function answerConditionally<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  representation: Representation<T>,
): Promise<T | undefined> {
  const notModified = isNotModified(request.headers, representation);
  // Built before any header is set: a body that fails (a Problem) must not carry validators.
  const body = notModified ? undefined : await representation.body();
  reply
    .header('etag', representation.etag)
    .header('last-modified', httpDate(representation.lastModified))
    .header('cache-control', 'private, no-cache');
  if (notModified) reply.status(304);
  return body;
}

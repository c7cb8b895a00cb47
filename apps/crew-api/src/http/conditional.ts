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

/** A body as the JSON bytes sent, typed by what they hold. */
export type JsonBody<T> = Buffer & { readonly __holds?: T };

/**
 * Each body's JSON, made once per body object: a body a replica keeps (SnapshotCache) is the same
 * object on every answer, so a kept vessel page (~10 kB) or sea-time answer is serialized once,
 * not once per request. Held only as long as its body is.
 */
const serialized = new WeakMap<object, Buffer>();

function json(body: object): Buffer {
  let bytes = serialized.get(body);
  if (!bytes) {
    bytes = Buffer.from(JSON.stringify(body));
    serialized.set(body, bytes);
  }
  return bytes;
}

/**
 * Conditional GET (RFC 9110 §13): always `ETag`, `Last-Modified` and `Cache-Control: private,
 * no-cache` (the body depends on the caller's token, and a cache must revalidate every time);
 * `If-None-Match`, or else `If-Modified-Since`, that still matches is answered 304 without a
 * body (§15.4.5). Resolves the body to send as JSON bytes, or undefined for a 304.
 */
export async function answerConditionally<T extends object>(
  request: FastifyRequest,
  reply: FastifyReply,
  representation: Representation<T>,
): Promise<JsonBody<T> | undefined> {
  const notModified = isNotModified(request.headers, representation);
  // Built before any header is set: a body that fails (a Problem) must not carry validators.
  const body = notModified ? undefined : json(await representation.body());
  reply
    .header('etag', representation.etag)
    .header('last-modified', httpDate(representation.lastModified))
    .header('cache-control', 'private, no-cache');
  if (notModified) reply.status(304);
  else reply.type('application/json; charset=utf-8');
  return body;
}

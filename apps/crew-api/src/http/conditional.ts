import { httpDate, isNotModified, strongEtag } from '@svc/platform';
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

/** Validators, and the body built only when it is sent (a matching revalidation never builds it). */
export interface Representation<T> {
  /** Strong ETag, quoted (docs/rules.md, Crew records). */
  readonly etag: string;
  /** The last change, truncated to the second for Last-Modified. */
  readonly lastModified: Date;
  readonly body: () => T | Promise<T>;
}

/** A body as the JSON bytes sent, typed by what they hold. */
export type JsonBody<T> = Buffer & { readonly __holds?: T };

/** Each body object's JSON, made once: a kept body (SnapshotCache) is serialized once, not per request. */
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
 * no-cache` (the body depends on the token); resolves the JSON bytes, or undefined for a 304.
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

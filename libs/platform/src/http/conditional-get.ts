import type { FastifyReply, FastifyRequest } from 'fastify';
import { hash } from 'node:crypto';

/** A strong ETag of everything the caller-visible body depends on: callers who may see different bodies never share one. */
export function strongEtag(
  ...parts: readonly (string | number | boolean | null | undefined | readonly string[])[]
): string {
  let text = '';
  for (const part of parts) text += `${JSON.stringify(part ?? null)}\u0000`;
  return `"${hash('sha256', text, 'base64url').slice(0, 27)}"`;
}

export function httpDate(date: Date): string {
  return new Date(Math.floor(date.getTime() / 1000) * 1000).toUTCString();
}

/** True means "answer 304"; If-None-Match, when present, overrides If-Modified-Since (RFC 9110 §13.2.2). */
export function isNotModified(
  headers: { 'if-none-match'?: string | string[]; 'if-modified-since'?: string | string[] },
  validators: { readonly etag: string; readonly lastModified: Date },
): boolean {
  const inm = headers['if-none-match'];
  if (inm !== undefined) {
    const value = Array.isArray(inm) ? inm.join(',') : inm;
    if (value.trim() === '*') return true;
    // Weak comparison (RFC 9110 §8.8.3.2): W/ prefixes are ignored for If-None-Match.
    const etag = validators.etag.replace(/^W\//, '');
    return value.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
  }
  const ims = headers['if-modified-since'];
  if (ims === undefined) return false;
  const since = Date.parse(Array.isArray(ims) ? ims[0] : ims);
  if (Number.isNaN(since)) return false;
  return Math.floor(validators.lastModified.getTime() / 1000) * 1000 <= since;
}

/** What a bearer token's body depends on besides the resource (the Principal of @svc/security). */
export interface BearerCaller {
  readonly client_id: string;
  readonly scopes: readonly string[];
}

/** A token's scopes in a canonical order, for validators (the ETag depends on them). */
export function scopeKey(principal: { readonly scopes: readonly string[] }): string {
  return [...principal.scopes].sort().join(' ');
}

/** A strong ETag of `parts` for this caller: the body depends on the token's scopes and its client. */
export function callerEtag(principal: BearerCaller, ...parts: string[]): string {
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

/** Each body object's JSON, made once: a kept body (crew-api's SnapshotCache) is serialized once, not per request. */
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

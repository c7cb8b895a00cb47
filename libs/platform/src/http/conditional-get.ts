import { createHash } from 'node:crypto';

/** Conditional GET (RFC 9110 §13) for every app that serves validators: one rule for the crew data and the partners' own reads. */
/** A strong ETag of everything the caller-visible body depends on: callers who may see different bodies never share one. */
export function strongEtag(
  ...parts: readonly (string | number | boolean | null | undefined | readonly string[])[]
): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(JSON.stringify(part ?? null)).update('\u0000');
  return `"${hash.digest('base64url').slice(0, 27)}"`;
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

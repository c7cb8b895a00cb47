import { createHash } from 'node:crypto';

/** What a representation's validators are built from (docs/rules.md, Crew records). */
export interface Validators {
  /** Strong ETag, quoted. */
  readonly etag: string;
  /** The representation's last change, truncated to the second for Last-Modified. */
  readonly lastModified: Date;
}

/**
 * A strong ETag derived from everything the caller-visible representation depends on, so two
 * callers who may see different bodies never share a tag.
 */
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

/**
 * RFC 9110 §13.2.2: If-None-Match is evaluated when present and If-Modified-Since is then
 * ignored; otherwise If-Modified-Since. True means "answer 304".
 */
export function isNotModified(
  headers: { 'if-none-match'?: string | string[]; 'if-modified-since'?: string | string[] },
  validators: Validators,
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

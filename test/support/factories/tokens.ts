import { createHash, randomBytes } from 'node:crypto';

/** An opaque token no server ever issued. */
export function unknownToken(): string {
  return randomBytes(32).toString('base64url');
}

/** SHA-256 hex digest of a token: what the introspection contract and cache keys use. */
export function tokenDigest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** The token response of docs/rules.md (Resources, Token response). */
export interface TokenResponse {
  readonly access_token: string;
  readonly token_type: string;
  readonly expires_in: number;
  readonly refresh_token: string;
  readonly scope: string;
}

/** An `application/x-www-form-urlencoded` body; a list of pairs keeps repeated names. */
export function formBody(fields: Record<string, string> | readonly (readonly [string, string])[]): string {
  const pairs = Array.isArray(fields) ? fields : Object.entries(fields);
  const body = new URLSearchParams();
  for (const [k, v] of pairs as readonly (readonly [string, string])[]) body.append(k, v);
  return body.toString();
}

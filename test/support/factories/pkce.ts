import { createHash, randomBytes } from 'node:crypto';

/** A PKCE pair (RFC 7636 §4.1, §4.2): a fresh, single-use verifier and its S256 challenge. */
export interface PkcePair {
  readonly verifier: string;
  readonly challenge: string;
}

/** `base64url(sha256(verifier))` without padding (RFC 7636 §4.2). */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/**
 * A verifier of exactly `length` characters from the unreserved set of RFC 7636 §4.1
 * (`[A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~"`). Lengths outside 43-128 are for tests of
 * the rejection.
 */
export function codeVerifier(length = 64): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~';
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i += 1) out += alphabet[bytes[i] % alphabet.length];
  return out;
}

export function pkcePair(length = 64): PkcePair {
  const verifier = codeVerifier(length);
  return { verifier, challenge: s256(verifier) };
}

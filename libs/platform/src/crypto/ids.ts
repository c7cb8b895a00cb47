import { randomBytes } from 'node:crypto';

/** The prefixes of the ids the service mints (docs/rules.md, Identifiers). */
export type IdPrefix = 'usr' | 'evt' | 'ste' | 'vp' | 'sps' | 'dlv' | 'tkp';

/**
 * A prefixed, random, URL-safe identifier (docs/rules.md, Identifiers): `<prefix>_` and `bytes`
 * random bytes in base64url without padding. 15 bytes make 20 characters; the ids that were first
 * minted from 16 bytes (22 characters) keep that length, since partners see them.
 */
export function newId(prefix: IdPrefix, bytes: 15 | 16 = 15): string {
  return `${prefix}_${randomBytes(bytes).toString('base64url')}`;
}

/**
 * An opaque credential (tokens, codes, client and webhook secrets, session ids): 256 random bits,
 * base64url without padding (43 characters), after a prefix that secret scanners can match.
 */
export function newSecret(prefix = ''): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

import { randomFillSync } from 'node:crypto';

/**
 * The random bytes of ids and secrets come from a pool that the CSPRNG refills whole, as Node does
 * for randomUUID: one call into OpenSSL per many tokens instead of one per token, which showed in
 * the token endpoint's profile. Each byte is handed out once and zeroed as it is, so the pool never
 * keeps a copy of an issued credential; what it holds are bytes nobody has seen yet.
 */
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let taken = POOL_BYTES;

function randomBase64url(bytes: number): string {
  if (taken + bytes > POOL_BYTES) {
    randomFillSync(pool);
    taken = 0;
  }
  const text = pool.toString('base64url', taken, taken + bytes);
  pool.fill(0, taken, taken + bytes);
  taken += bytes;
  return text;
}

/** The prefixes of the ids the service mints (docs/rules.md, Identifiers). */
export type IdPrefix = 'usr' | 'evt' | 'ste' | 'vp' | 'sps' | 'dlv' | 'tkp' | 'pps' | 'whk';

/**
 * A prefixed, random, URL-safe identifier (docs/rules.md, Identifiers): `<prefix>_` and `bytes`
 * random bytes in base64url without padding. 15 bytes make 20 characters; the ids that were first
 * minted from 16 bytes (22 characters) keep that length, since partners see them.
 */
export function newId(prefix: IdPrefix, bytes: 15 | 16 = 15): string {
  return `${prefix}_${randomBase64url(bytes)}`;
}

/**
 * An opaque credential (tokens, codes, client and webhook secrets, session ids): 256 random bits,
 * base64url without padding (43 characters), after a prefix that secret scanners can match.
 */
export function newSecret(prefix = ''): string {
  return `${prefix}${randomBase64url(32)}`;
}

import { randomFillSync } from 'node:crypto';

/**
 * Ids and secrets come from a pool the CSPRNG refills whole (one OpenSSL call per many tokens); each
 * byte is zeroed as it is handed out, so the pool never keeps a copy of an issued credential.
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

/** `<prefix>_` and `bytes` random bytes in base64url (docs/rules.md, Identifiers); ids first minted from 16 keep 16. */
export function newId(prefix: IdPrefix, bytes: 15 | 16 = 15): string {
  return `${prefix}_${randomBase64url(bytes)}`;
}

/** An opaque credential: 256 random bits in base64url, after a prefix secret scanners can match. */
export function newSecret(prefix = ''): string {
  return `${prefix}${randomBase64url(32)}`;
}

/**
 * The token-introspection cache shared by auth-server (writer of tombstones) and every resource
 * app (reader; writer of answers). Keys live in Redis under the environment's key prefix.
 *
 * Protocol, so that a revoked token never passes:
 * - Readers look up `introspect:<sha256 hex of the token>`. On a miss they ask auth-server
 *   (RPC `auth.introspect`) and store the answer with `SET ... EX <ttl> NX`: only if absent, so
 *   an answer read from the database before a revocation committed can never overwrite the
 *   revocation's tombstone. TTL = min(60 s, the token's remaining lifetime); inactive answers 60 s.
 * - Every revocation (revoke, refresh rotation, disconnect, code replay) writes a tombstone
 *   `{"active":false}` for each affected access token with a plain SET (overwriting any cached
 *   answer) BEFORE its database transaction commits; if Redis does not take the tombstone, the
 *   transaction rolls back and the caller is told to retry. A committed revocation therefore
 *   always has its tombstone in place.
 * - A reader that cannot reach Redis skips the cache and asks auth-server; if auth-server cannot
 *   answer either, the request fails closed with 503.
 * - The cache Redis must run without persistence: a snapshot restored after a restart could bring
 *   back answers that tombstones had replaced.
 */
export const INTROSPECTION_CACHE_MAX_TTL_SECONDS = 60;
export const INTROSPECTION_TOMBSTONE_TTL_SECONDS = 120;

export function introspectionCacheKey(tokenDigest: string): string {
  return `introspect:${tokenDigest}`;
}

export type CachedIntrospection =
  | { readonly active: false }
  | {
      readonly active: true;
      readonly user_id: string;
      readonly client_id: string;
      readonly scopes: readonly string[];
      /** ISO 8601 UTC. */
      readonly expires_at: string;
    };

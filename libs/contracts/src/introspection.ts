/**
 * The token-introspection cache shared by auth-server (writer of tombstones) and every resource
 * app (reader; writer of answers). Keys live under the environment's key prefix, in two Redis
 * roles: answers in the cache Redis (evictable), tombstones in the state Redis (`noeviction`).
 *
 * Protocol, so that a revoked token never passes:
 * - Readers look up `introspect:<sha256 hex of the token>` in the cache Redis. On a miss they ask
 *   auth-server (RPC `auth.introspect`) and store the answer with `SET ... EX <ttl> NX`.
 *   TTL = min(60 s, the token's remaining lifetime); inactive answers 60 s. A live answer, cached
 *   or not, stands only once the state Redis has no tombstone `revoked:{<client_id>}:<digest>` for
 *   the token (the client_id is the answer's); the tombstone wins over any answer.
 * - Every revocation (revoke, refresh rotation, disconnect, code replay, suspension) writes the
 *   tombstone `revoked:{<client_id>}:<digest>` of each affected access token in the state Redis
 *   BEFORE its database transaction commits; if Redis does not take it, the transaction rolls back and the
 *   caller is told to retry. A committed revocation therefore always has its tombstone in place,
 *   and the state Redis never evicts it, so whatever the cache Redis holds, loses or brings back
 *   cannot revive the token. The tombstone outlives any answer cached before the revocation
 *   (at most INTROSPECTION_CACHE_MAX_TTL_SECONDS, stored within an RPC timeout of being read).
 * - A reader may keep what a live answer says in its own memory (whose token it is, its scopes and
 *   expiry never change) for at most INTROSPECTION_CACHE_MAX_TTL_SECONDS after it read it, as long as
 *   every request it admits that way checks `revoked:{<client_id>}:<digest>` in the state Redis
 *   and reads `generation:{<client_id>}` (stateGenerationKey); those keys share their Redis
 *   Cluster slot with the partner's rate-limit key, so one script checks, reads and counts the
 *   request in a single round trip. Such a reader stores an answer with the generation it read
 *   (`"generation"` beside the answer's fields) and trusts a cached answer only under the
 *   generation its count reads now; another (or none) means tombstones may be lost, and it asks
 *   auth-server. A route that is not metered does the same without counting. The generation a
 *   reader stores and compares carries the state Redis server's `run_id` (`<generation>@<run_id>`),
 *   so a failover to a replica, which holds the same generation key but may lack a tombstone,
 *   matches nothing stored before it.
 * - A reader that cannot reach either Redis skips the cache and asks auth-server; if auth-server
 *   cannot answer either, the request fails closed with 503.
 * - Only well-formed access tokens (isWellFormedAccessToken) are looked up or cached at all.
 */
export const INTROSPECTION_CACHE_MAX_TTL_SECONDS = 60;
export const INTROSPECTION_TOMBSTONE_TTL_SECONDS = 120;

export function introspectionCacheKey(tokenDigest: string): string {
  return `introspect:${tokenDigest}`;
}

/** A revoked access token's tombstone, under the hash tag of its partner's rate-limit key. */
export function partnerTombstoneKey(clientId: string, tokenDigest: string): string {
  return `revoked:{${clientId}}:${tokenDigest}`;
}

/**
 * A value the state Redis keeps per partner, set anew whenever it is missing: a reader that finds
 * another value than the one it remembered a token under knows the partner's slot lost data since
 * (a restart, a failover to a replica without it), tombstones included, and asks auth-server again.
 */
export function stateGenerationKey(clientId: string): string {
  return `generation:{${clientId}}`;
}

/** auth-server mints access tokens as this prefix and 32 random bytes in base64url (43 characters). */
export const ACCESS_TOKEN_PREFIX = 'at_';
const ACCESS_TOKEN_SHAPE = /^at_[A-Za-z0-9_-]{43}$/;

/**
 * Whether `token` has the exact shape auth-server mints. Anything else cannot be live, so it is
 * refused without a cache lookup, a cache entry or a question to auth-server: random garbage
 * costs nothing and cannot push real answers out of the cache.
 */
export function isWellFormedAccessToken(token: string): boolean {
  return ACCESS_TOKEN_SHAPE.test(token);
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

import { sha256Hex } from '@svc/platform';

/**
 * SHA-256 of an access token, lower-case hex: the only form in which a token is stored (auth-server's
 * tables), cached (`introspect:<digest>` in Redis) or sent over RPC (`auth.introspect`).
 */
export function tokenDigest(token: string): string {
  return sha256Hex(token);
}

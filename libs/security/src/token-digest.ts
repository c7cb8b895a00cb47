import { createHash } from 'node:crypto';

/**
 * SHA-256 of an access token, lower-case hex: the only form in which a token is stored (auth-server's
 * tables), cached (`introspect:<digest>` in Redis) or sent over RPC (`auth.introspect`).
 */
export function tokenDigest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

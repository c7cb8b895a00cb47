import { Inject, Injectable } from '@nestjs/common';
import type { CachedIntrospection } from '@svc/contracts';
import { IntrospectionCache, IntrospectionCacheUnavailableError } from './introspection-cache';
import { INTROSPECTOR, type Introspector } from './introspector';
import type { Principal } from './principal';
import { tokenDigest } from './token-digest';

/**
 * RFC 6750 §2.1 b64token syntax. Anything else cannot be one of our tokens, so it is refused
 * without costing auth-server a question or the cache an entry. The length cap is generous.
 */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
const MAX_TOKEN_LENGTH = 1024;

/**
 * Turns a bearer token into a Principal, or undefined when the token is not live.
 *
 * Cache hit: one Redis GET, no database, no RPC. Miss: auth-server is asked and its answer cached
 * with SET NX (a failed put costs the next request a question, never this one its answer).
 *
 * Redis unavailable (the decision of issue 3, point 6): the cache is skipped and auth-server is
 * asked on every request, and nothing is written. Refusing every request while Redis is away
 * would turn a cache outage into an API outage; trusting anything that is not auth-server's own
 * answer could let a revoked token through. auth-server reads its database, where a revocation
 * is committed, so a revoked token never passes. If auth-server cannot answer either, the request
 * fails closed with 503 `service_unavailable`.
 */
@Injectable()
export class TokenAuthenticator {
  constructor(
    private readonly cache: IntrospectionCache,
    @Inject(INTROSPECTOR) private readonly introspector: Introspector,
  ) {}

  async authenticate(token: string): Promise<Principal | undefined> {
    if (token.length > MAX_TOKEN_LENGTH || !B64TOKEN.test(token)) return undefined;
    const digest = tokenDigest(token);

    let cacheAvailable = true;
    let answer: CachedIntrospection | undefined;
    try {
      answer = await this.cache.get(digest);
    } catch (err) {
      if (!(err instanceof IntrospectionCacheUnavailableError)) throw err;
      cacheAvailable = false;
    }

    if (answer === undefined) {
      // Rejects with DependencyUnavailableError when auth-server does not answer: fail closed.
      answer = await this.introspector.introspect(digest);
      if (cacheAvailable) await this.cache.putIfAbsent(digest, answer).catch(() => false);
    }
    return toPrincipal(answer, Date.now());
  }
}

/** An answer whose `expires_at` has passed is inactive, wherever it came from. */
function toPrincipal(answer: CachedIntrospection, nowMs: number): Principal | undefined {
  if (!answer.active) return undefined;
  const expiresAt = Date.parse(answer.expires_at);
  if (Number.isNaN(expiresAt) || expiresAt <= nowMs) return undefined;
  return {
    user_id: answer.user_id,
    client_id: answer.client_id,
    scopes: [...answer.scopes],
    expires_at: answer.expires_at,
  };
}

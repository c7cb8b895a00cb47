import { Inject, Injectable, Optional } from '@nestjs/common';
import { isWellFormedAccessToken, type CachedIntrospection } from '@svc/contracts';
import { AppMetrics, sha256Hex } from '@svc/platform';
import type { Counter } from 'prom-client';
import { IntrospectionCache, IntrospectionCacheUnavailableError } from './introspection-cache';
import { INTROSPECTOR, type Introspector } from './introspector';
import type { Principal } from './principal';

/**
 * Turns a bearer token into a Principal, or undefined when the token is not live.
 *
 * A token not of the exact shape auth-server mints is refused before any lookup, so random
 * garbage cannot flush the cache. A miss asks auth-server and caches its answer (a failed put
 * costs the next request a question, never this one its answer).
 *
 * Either Redis unavailable: auth-server is asked on every request and nothing is written. Its
 * database holds every committed revocation, so a revoked token never passes, and a cache outage
 * is no API outage. If auth-server cannot answer either, the request fails closed with 503.
 */
@Injectable()
export class TokenAuthenticator {
  /** `token_cache_lookups_total{result}`: `hit`, or `miss` when auth-server was asked (cache down included). */
  private readonly lookups?: Counter<'result'>;

  constructor(
    private readonly cache: IntrospectionCache,
    @Inject(INTROSPECTOR) private readonly introspector: Introspector,
    @Optional() metrics?: AppMetrics,
  ) {
    this.lookups = metrics?.counter(
      'token_cache_lookups_total',
      'bearer token lookups answered by the token cache (hit) or by introspection at auth-server (miss)',
      ['result'],
    );
    if (this.lookups) AppMetrics.preset(this.lookups, { result: ['hit', 'miss'] });
  }

  async authenticate(token: string): Promise<Principal | undefined> {
    if (!isWellFormedAccessToken(token)) return undefined;
    const digest = sha256Hex(token);

    let cacheAvailable = true;
    let answer: CachedIntrospection | undefined;
    try {
      answer = await this.cache.get(digest);
    } catch (err) {
      if (!(err instanceof IntrospectionCacheUnavailableError)) throw err;
      cacheAvailable = false;
    }

    this.lookups?.inc({ result: answer === undefined ? 'miss' : 'hit' });
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
  const { active: _active, ...principal } = answer;
  return principal;
}

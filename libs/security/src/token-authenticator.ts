import { Inject, Injectable, Optional } from '@nestjs/common';
import {
  INTROSPECTION_CACHE_MAX_TTL_SECONDS,
  isWellFormedAccessToken,
  partnerTombstoneKey,
  type CachedIntrospection,
} from '@svc/contracts';
import { AppMetrics, sha256Hex } from '@svc/platform';
import type { Counter } from 'prom-client';
import { IntrospectionCache, IntrospectionCacheUnavailableError } from './introspection-cache';
import { INTROSPECTOR, type Introspector } from './introspector';
import type { Principal } from './principal';
import type { RateLimitDecision } from './rate-limit-decision';
import type { RateLimiter } from './rate-limiter';

/** Bounds the memory of tokens this process has seen live; the oldest entry goes first. */
const KNOWN_TOKENS_MAX = 20_000;
const KNOWN_FOR_MS = INTROSPECTION_CACHE_MAX_TTL_SECONDS * 1000;

/** A metered request: its guard's limiter counts it, and the decision goes to `onDecision`. */
export interface Metering {
  readonly limiter: RateLimiter;
  readonly onDecision: (decision: RateLimitDecision) => void;
}

interface KnownToken {
  readonly principal: Principal;
  readonly expiresAtMs: number;
  /** Read at most INTROSPECTION_CACHE_MAX_TTL_SECONDS ago: every tombstone outlives it. */
  readonly knownUntilMs: number;
}

/**
 * Turns a bearer token into a Principal, or undefined when the token is not live.
 *
 * A token not of the exact shape auth-server mints is refused before any lookup, so random
 * garbage cannot flush the cache. A miss asks auth-server and caches its answer (a failed put
 * costs the next request a question, never this one its answer).
 *
 * What a live answer says never changes (whose token, its scopes, its expiry), so the process keeps
 * it for up to INTROSPECTION_CACHE_MAX_TTL_SECONDS; whether the token was revoked since is asked
 * of the state Redis on every request. On a metered route (`metering`) that question and the
 * rate-limit count are one script call: one Redis round trip for an authenticated request.
 *
 * Either Redis unavailable: auth-server is asked on every request and nothing is written. Its
 * database holds every committed revocation, so a revoked token never passes, and a cache outage
 * is no API outage. If auth-server cannot answer either, the request fails closed with 503.
 */
@Injectable()
export class TokenAuthenticator {
  /** `token_cache_lookups_total{result}`: `hit`, or `miss` when auth-server was asked (cache down included). */
  private readonly lookups?: Counter<'result'>;
  private readonly known = new Map<string, KnownToken>();

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

  /**
   * With `metering` the request is also counted against its partner's limits, unless the token
   * is revoked (then it is not counted).
   */
  async authenticate(token: string, metering?: Metering): Promise<Principal | undefined> {
    if (!isWellFormedAccessToken(token)) return undefined;
    const digest = sha256Hex(token);
    const nowMs = Date.now();
    const known = this.known.get(digest);
    if (known && known.knownUntilMs > nowMs && known.expiresAtMs > nowMs) {
      const { principal } = known;
      let revoked: boolean;
      if (metering) {
        this.lookups?.inc({ result: 'hit' });
        revoked = !(await this.countUnlessRevoked(principal, digest, metering));
      } else {
        try {
          revoked = await this.cache.isRevoked(digest, principal.client_id);
        } catch (err) {
          if (!(err instanceof IntrospectionCacheUnavailableError)) throw err;
          return this.lookUp(digest, false);
        }
        this.lookups?.inc({ result: 'hit' });
      }
      return revoked ? undefined : principal;
    }
    if (known) this.known.delete(digest);
    return this.lookUp(digest, true, metering);
  }

  /** Through the shared cache, or auth-server; a live answer is remembered when the cache could be asked. */
  private async lookUp(
    digest: string,
    useCache: boolean,
    metering?: Metering,
  ): Promise<Principal | undefined> {
    let cacheAvailable = useCache;
    let answer: CachedIntrospection | undefined;
    if (useCache) {
      try {
        answer = await this.cache.get(digest);
      } catch (err) {
        if (!(err instanceof IntrospectionCacheUnavailableError)) throw err;
        cacheAvailable = false;
      }
    }
    this.lookups?.inc({ result: answer === undefined ? 'miss' : 'hit' });
    if (answer === undefined) {
      // Rejects with DependencyUnavailableError when auth-server does not answer: fail closed.
      answer = await this.introspector.introspect(digest);
      if (cacheAvailable) await this.cache.putIfAbsent(digest, answer).catch(() => false);
    }
    const nowMs = Date.now();
    const principal = toPrincipal(answer, nowMs);
    if (!principal) return undefined;
    if (cacheAvailable) this.remember(digest, principal, nowMs);
    if (metering && !(await this.countUnlessRevoked(principal, digest, metering))) return undefined;
    return principal;
  }

  /**
   * One script call checks the partner-tagged tombstone and counts. `revoked:<digest>` is asked
   * beside it in the same round trip, for tombstones written by an auth-server that predates the
   * partner-tagged key (a rolling upgrade); such a revoked request is counted, and refused.
   */
  private async countUnlessRevoked(
    principal: Principal,
    digest: string,
    metering: Metering,
  ): Promise<boolean> {
    const [decision, revoked] = await Promise.all([
      metering.limiter.consumeUnless(principal.client_id, partnerTombstoneKey(principal.client_id, digest)),
      this.cache.isRevoked(digest),
    ]);
    if (decision === undefined || revoked) {
      this.known.delete(digest);
      return false;
    }
    metering.onDecision(decision);
    return true;
  }

  private remember(digest: string, principal: Principal, nowMs: number): void {
    if (this.known.size >= KNOWN_TOKENS_MAX) this.known.delete(this.known.keys().next().value as string);
    this.known.set(digest, {
      principal,
      expiresAtMs: Date.parse(principal.expires_at),
      knownUntilMs: nowMs + KNOWN_FOR_MS,
    });
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

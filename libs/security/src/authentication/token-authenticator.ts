import { Injectable, Optional } from '@nestjs/common';
import {
  INTROSPECTION_CACHE_MAX_TTL_SECONDS,
  isWellFormedAccessToken,
  partnerTombstoneKey,
  stateGenerationKey,
} from '@svc/contracts';
import { AppMetrics, sha256Hex } from '@svc/platform';
import type { Counter } from 'prom-client';
import {
  IntrospectionCache,
  IntrospectionCacheUnavailableError,
  type StampedIntrospection,
} from './introspection-cache';
import { Introspector } from './introspector';
import type { Principal } from './bearer-auth.guard';
import type { RateLimitDecision, RateLimiter, TokenCount, TokenKeys } from '../limits/rate-limit';

/** Bounds the memory of tokens this process has seen live; the oldest entry goes first. */
const KNOWN_TOKENS_MAX = 20_000;
const KNOWN_FOR_MS = INTROSPECTION_CACHE_MAX_TTL_SECONDS * 1000;

/** A metered request: its guard's limiter counts it, and the decision goes to `onDecision`. */
export interface Metering {
  readonly limiter: RateLimiter;
  readonly onDecision: (decision: RateLimitDecision) => void;
}

/** A count whose generation is stamped with the state Redis server (undefined: not known now). */
type StampedCount = Omit<TokenCount, 'generation'> & { readonly generation: string | undefined };

/** The shared cache's answer (`cached`), or else auth-server's, which `store` says to keep (a miss). */
type Found = { readonly answer: StampedIntrospection; readonly cached: boolean; readonly store: boolean };

interface KnownToken {
  readonly principal: Principal;
  /** The keys its count reads: its partner-tagged tombstone and the partner's state generation. */
  readonly keys: TokenKeys;
  readonly expiresAtMs: number;
  /** Read at most INTROSPECTION_CACHE_MAX_TTL_SECONDS ago: every tombstone outlives it. */
  readonly knownUntilMs: number;
  /**
   * The partner's state generation in Redis when it was read, stamped with the server that said
   * it (IntrospectionCache.stamp): its tombstones were there then.
   */
  readonly generation: string;
}

/**
 * Turns a bearer token into a Principal, or undefined when the token is not live (docs/architecture.md,
 * "Token introspection cache and Redis"). A token not of the exact shape auth-server mints is refused
 * before any lookup, so garbage cannot flush the cache. On a metered route a live answer is kept in the
 * process, and each request is one script call (tombstone, generation, count); a generation other than
 * the one an answer was remembered or cached under means the state Redis lost data since, and
 * auth-server is asked again. Either Redis unavailable: auth-server is asked on every request and
 * nothing is written; if it cannot answer either, the request fails closed with 503.
 */
@Injectable()
export class TokenAuthenticator {
  /** `token_cache_lookups_total{result}`: `hit`, or `miss` when auth-server was asked (cache down included). */
  private readonly lookups?: Counter<'result'>;
  private readonly known = new Map<string, KnownToken>();

  constructor(
    private readonly cache: IntrospectionCache,
    private readonly introspector: Introspector,
    @Optional() metrics?: AppMetrics,
  ) {
    this.lookups = metrics?.counter(
      'token_cache_lookups_total',
      'bearer token lookups answered by the token cache (hit) or by introspection at auth-server (miss)',
      ['result'],
    );
    if (this.lookups) AppMetrics.preset(this.lookups, { result: ['hit', 'miss'] });
    // Another state Redis server (a failover, a restart) may lack tombstones the last one held:
    // nothing this process remembers was checked against it. (Stamps would not match either.)
    this.cache.onStateServerChange(() => this.known.clear());
  }

  /**
   * With `metering` the request is also counted against its partner's limits, unless the token
   * is revoked (then it is not counted).
   */
  async authenticate(token: string, metering?: Metering): Promise<Principal | undefined> {
    const digest = sha256Hex(token);
    const known = metering && this.known.get(digest);
    if (known) {
      const nowMs = Date.now();
      if (known.knownUntilMs > nowMs && known.expiresAtMs > nowMs) {
        this.lookups?.inc({ result: 'hit' });
        const count = await this.countUnlessRevoked(known.principal.client_id, known.keys, metering.limiter);
        if (count?.generation !== undefined && count.generation === known.generation) {
          metering.onDecision(count.decision);
          return known.principal;
        }
        this.known.delete(digest);
        if (!count) return undefined;
        // Counted already; whether the token still lives, only auth-server can say now.
        return this.settle(digest, await this.lookUp(digest), known.keys, count, metering);
      }
      this.known.delete(digest);
    }
    if (!isWellFormedAccessToken(token)) return undefined;

    const found = await this.ask(digest);
    const principal = toPrincipal(found.answer, Date.now());
    if (!principal) {
      if (found.store) await this.store(digest, found.answer);
      return undefined;
    }
    if (!metering) return this.authenticateUnmetered(digest, found, principal);
    // The keys of its count (rate-limit.ts's script), all under its partner's hash tag.
    const keys = {
      tombstone: partnerTombstoneKey(principal.client_id, digest),
      generation: stateGenerationKey(principal.client_id),
    };
    const count = await this.countUnlessRevoked(principal.client_id, keys, metering.limiter);
    if (!count) return undefined;
    if (found.cached && (count.generation === undefined || found.answer.generation !== count.generation)) {
      // Stored under another generation of the partner's state (or by an earlier release, unstamped):
      // tombstones written since may be lost with it. Counted already; auth-server says whether it lives.
      return this.settle(digest, await this.lookUp(digest), keys, count, metering);
    }
    if (found.store && count.generation !== undefined) {
      await this.store(digest, { ...found.answer, generation: count.generation });
    }
    return this.settle(digest, principal, keys, count, metering);
  }

  /**
   * A route that is not metered (`/oauth/userinfo`) keeps the same protocol without counting: a
   * live answer stands only once the state Redis, in one script call, has no tombstone for the
   * token and names the generation (stamped with its server) the answer was cached under; another
   * generation means the state Redis lost data since (a flush, a failover, a restart), tombstones
   * included, and auth-server is asked. The state Redis unavailable: only auth-server's word counts.
   */
  private async authenticateUnmetered(
    digest: string,
    found: Found,
    principal: Principal,
  ): Promise<Principal | undefined> {
    let generation: string | undefined | null;
    try {
      generation = await this.cache.liveGeneration(principal.client_id, digest);
    } catch (err) {
      if (!(err instanceof IntrospectionCacheUnavailableError)) throw err;
      return found.cached ? this.lookUp(digest) : principal;
    }
    if (generation === null) return undefined;
    if (found.cached && (generation === undefined || found.answer.generation !== generation)) {
      return this.lookUp(digest);
    }
    if (found.store && generation !== undefined) await this.store(digest, { ...found.answer, generation });
    return principal;
  }

  /** auth-server's word, past the shared cache (which is not written either). */
  private async lookUp(digest: string): Promise<Principal | undefined> {
    this.lookups?.inc({ result: 'miss' });
    return toPrincipal(await this.introspector.introspect(digest), Date.now());
  }

  /** Nothing is written here. */
  private async ask(digest: string): Promise<Found> {
    let cacheAvailable = true;
    let answer: StampedIntrospection | undefined;
    try {
      answer = await this.cache.get(digest);
    } catch (err) {
      if (!(err instanceof IntrospectionCacheUnavailableError)) throw err;
      cacheAvailable = false;
    }
    this.lookups?.inc({ result: answer === undefined ? 'miss' : 'hit' });
    if (answer !== undefined) return { answer, cached: true, store: false };
    // Rejects with DependencyUnavailableError when auth-server does not answer: fail closed.
    return { answer: await this.introspector.introspect(digest), cached: false, store: cacheAvailable };
  }

  /** A failed put costs the next request a question, never this one its answer. */
  private async store(digest: string, answer: StampedIntrospection): Promise<void> {
    await this.cache.putIfAbsent(digest, answer).catch(() => false);
  }

  /** One script call checks the token's tombstone, reads the generation and counts. */
  private async countUnlessRevoked(
    clientId: string,
    keys: TokenKeys,
    limiter: RateLimiter,
  ): Promise<StampedCount | undefined> {
    const count = await limiter.consumeForToken(clientId, keys);
    if (!count) return undefined;
    return { decision: count.decision, generation: this.cache.stamp(count.generation) };
  }

  private settle(
    digest: string,
    principal: Principal | undefined,
    keys: TokenKeys,
    count: StampedCount,
    metering: Metering,
  ): Principal | undefined {
    if (!principal) return undefined;
    if (count.generation !== undefined) {
      if (this.known.size >= KNOWN_TOKENS_MAX) this.known.delete(this.known.keys().next().value as string);
      this.known.set(digest, {
        principal,
        keys,
        generation: count.generation,
        expiresAtMs: Date.parse(principal.expires_at),
        knownUntilMs: Date.now() + KNOWN_FOR_MS,
      });
    }
    metering.onDecision(count.decision);
    return principal;
  }
}

/** An answer whose `expires_at` has passed is inactive, wherever it came from. */
function toPrincipal(answer: StampedIntrospection, nowMs: number): Principal | undefined {
  if (!answer.active) return undefined;
  const expiresAt = Date.parse(answer.expires_at);
  if (Number.isNaN(expiresAt) || expiresAt <= nowMs) return undefined;
  const { active: _active, generation: _generation, ...principal } = answer;
  return principal;
}

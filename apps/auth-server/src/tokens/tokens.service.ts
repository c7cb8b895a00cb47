import { Inject, Injectable, Optional } from '@nestjs/common';
import { isScope, type IntrospectResponse, type TokenResponse } from '@svc/contracts';
import {
  APP_CONFIG,
  APP_LOGGER,
  AppMetrics,
  assertUnreachable,
  GroupBatcher,
  newId,
  newSecret,
  sha256Hex,
  TransactionRunner,
  type ConfigOf,
} from '@svc/platform';
import { IntrospectionCache, type Introspector } from '@svc/security';
import type { AUTH_SERVER_CONFIG } from '../config';
import { ConsentsService } from '../consents/consents.service';
import { pkceChallenge } from '../crypto/secrets';
import { OAuthException } from '../oauth/oauth.exception';
import type { PartnerEntity } from '../partners/partner.entity';
import { PartnersService, RememberedClientStale } from '../partners/partners.service';
import type { Counter } from 'prom-client';
import type { Logger } from 'pino';
import { AccessTokenDerivation } from './access-token-derivation';
import {
  TokenPairsRepository,
  type NewPair,
  type RefreshOutcome,
  type RefreshRotation,
  type TombstonedRotation,
} from './token-pairs.repository';

// RFC 7636 §4.1: 43-128 characters of the unreserved set.
const CODE_VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

@Injectable()
export class TokensService implements Introspector {
  private readonly reuse?: Counter<'outcome'>;
  private readonly derivation: AccessTokenDerivation;
  /**
   * Group commit of the common refresh: one statement in flight, and the rotations that arrive
   * meanwhile go together in the next (`token_refresh_batch`), their tombstones first in one
   * pipelined Redis write. Measured against a transaction per refresh, it cuts PostgreSQL's CPU per
   * refresh at 16 clients to about a third (docs/performance.md).
   */
  private readonly refreshes = new GroupBatcher<TombstonedRotation, RefreshOutcome | undefined>(
    async (batch) => {
      await this.cache.tombstoneEach(
        batch.map((b) => ({ clientId: b.rotation.clientId, digest: b.tombstoned })),
      );
      return this.pairs.refreshBatch(batch);
    },
    MAX_REFRESH_BATCH,
  );

  constructor(
    private readonly pairs: TokenPairsRepository,
    private readonly partners: PartnersService,
    private readonly consents: ConsentsService,
    private readonly transactions: TransactionRunner,
    private readonly cache: IntrospectionCache,
    @Inject(APP_CONFIG) private readonly config: ConfigOf<typeof AUTH_SERVER_CONFIG>,
    @Inject(APP_LOGGER) private readonly logger: Logger,
    @Optional() metrics?: AppMetrics,
  ) {
    this.derivation = new AccessTokenDerivation(config.SECRETS_ENCRYPTION_KEY);
    // family_revoked: a rotated refresh token came back (RFC 9700 §4.14.2), likely a leaked one.
    this.reuse = metrics?.counter('refresh_token_reuse_total', 'rotated refresh tokens presented again', [
      'outcome',
    ]);
  }

  /**
   * authorization_code grant (RFC 6749 §4.1.3, RFC 7636 §4.6): `token_exchange` holds the rules.
   * The code is consumed by its first use whatever the outcome, so it cannot be guessed at; a
   * second use is a replay, which also revokes everything the code issued (RFC 9700 §4.5).
   */
  async exchangeCode(
    client: PartnerEntity,
    input: { code: string; redirectUri: string; codeVerifier: string },
  ): Promise<TokenResponse> {
    if (!CODE_VERIFIER.test(input.codeVerifier)) {
      throw new OAuthException(
        'invalid_request',
        'code_verifier must be 43-128 characters of [A-Za-z0-9-._~].',
      );
    }
    const { tokens, next } = this.newPair();
    const exchange = {
      codeDigest: sha256Hex(input.code),
      clientId: client.clientId,
      secretDigest: client.secretDigest,
      // PostgreSQL text holds no NUL; such a URI was never registered, so it cannot match.
      redirectUri: input.redirectUri.includes('\u0000') ? '' : input.redirectUri,
      codeChallenge: pkceChallenge(input.codeVerifier),
      next,
    };
    // One statement in autocommit; a replay that revokes a live pair, again in a transaction that
    // tombstones its access token before COMMIT.
    let result = await this.pairs.exchangeCode(exchange);
    if (result.outcome === 'transaction') {
      result = await this.transactions.run(async (tx) => {
        const again = await this.pairs.exchangeCode(exchange, tx);
        if (again.outcome === 'replayed') await this.cache.tombstone(again.clientId, again.ended);
        return again;
      });
    }
    switch (result.outcome) {
      case 'issued':
        return { ...tokens, scope: result.scopes.join(' ') };
      case 'client':
        return this.staleClient(client);
      case 'unknown':
        throw failed('The authorization code is unknown.');
      case 'replayed':
        throw failed('The authorization code was already used; its tokens are revoked.');
      case 'expired':
        throw failed('The authorization code has expired.');
      case 'other_client':
        throw failed('The code was issued to another client.');
      case 'redirect_uri':
        throw failed('redirect_uri does not match the authorization request.');
      case 'pkce':
        throw failed('code_verifier does not match the code_challenge.');
      case 'disconnected':
        throw failed(DISCONNECTED);
      case 'transaction':
        throw new Error('token_exchange answered transaction inside a transaction');
      default:
        return assertUnreachable(result);
    }
  }

  /**
   * refresh_token grant (RFC 6749 §6): rotation on every use, with reuse detection (RFC 9700
   * §4.14.2); `token_refresh` holds every rule (the lost race, the grace re-issue, reuse).
   *
   * Every access token a rotation ends is tombstoned before the rotation commits. The common case
   * (a live token, no narrowing) is one statement in autocommit, shared with the refreshes in
   * flight beside it: the access token it ends is the one derived from the refresh token,
   * tombstoned first. Anything else (a narrowing, which may be
   * refused and must then leave the pair working; a re-issue; reuse; a pair whose access token is
   * not the derived one) runs in a transaction that tombstones what the function ended before
   * COMMIT.
   */
  async refresh(
    client: PartnerEntity,
    input: { refreshToken: string; scope?: string; arrivedAt?: number },
  ): Promise<TokenResponse> {
    const { tokens, next } = this.newPair();
    const rotation: RefreshRotation = {
      refreshDigest: sha256Hex(input.refreshToken),
      clientId: client.clientId,
      secretDigest: client.secretDigest,
      // A name that is no scope cannot be granted; it goes as one PostgreSQL text can hold (no NUL).
      scopes:
        input.scope === undefined
          ? null
          : requestedScopes(input.scope).map((s) => (isScope(s) ? s : NOT_A_SCOPE)),
      arrivedAt: input.arrivedAt ?? performance.now(),
      raceWindowMs: REFRESH_RACE_WINDOW_MS,
      graceSeconds: this.config.REFRESH_TOKEN_REUSE_GRACE_SECONDS,
      next,
    };
    let result: RefreshOutcome = { outcome: 'transaction' };
    if (rotation.scopes === null) {
      const tombstoned = sha256Hex(this.derivation.accessTokenFor(input.refreshToken));
      // Undefined: its batch gave way to a lock and changed nothing (its tombstone is written).
      result =
        (await this.refreshes.submit({ rotation, tombstoned })) ??
        (await this.pairs.refresh(rotation, { tombstoned }));
    }
    if (result.outcome === 'transaction') {
      result = await this.transactions.run(async (tx) => {
        const again = await this.pairs.refresh(rotation, { tx });
        if ('ended' in again && again.ended) await this.cache.tombstone(client.clientId, again.ended);
        return again;
      });
    }
    switch (result.outcome) {
      case 'rotated':
        return { ...tokens, scope: result.scopes.join(' ') };
      case 'reissued':
        this.reuse?.inc({ outcome: 'grace_reissued' });
        this.logger.info(
          { client_id: client.clientId, user_id: result.userId },
          'auth-server: previous refresh token presented again within the grace window; re-issued',
        );
        return { ...tokens, scope: result.scopes.join(' ') };
      case 'reused':
        this.reuse?.inc({ outcome: 'family_revoked' });
        this.logger.warn(
          { client_id: client.clientId, user_id: result.userId, revoked_pairs: result.ended.length },
          'auth-server: a rotated refresh token was presented again; its family is revoked',
        );
        throw failed('The refresh token was already used; its tokens are revoked.');
      case 'client':
        return this.staleClient(client);
      case 'unusable':
      case 'raced':
        throw failed(UNUSABLE);
      case 'scope':
        throw new OAuthException(
          'invalid_scope',
          `The scope may only narrow the original grant (${result.scopes.join(' ')}).`,
        );
      case 'disconnected':
        throw failed(DISCONNECTED);
      case 'transaction':
        throw new Error('token_refresh answered transaction inside a transaction');
      default:
        return assertUnreachable(result);
    }
  }

  /** The partner row disagreed with this process's memory (a rotated secret, a suspension). */
  private staleClient(client: PartnerEntity): never {
    this.partners.forget(client.clientId);
    throw new RememberedClientStale(client.clientId);
  }

  /**
   * RFC 7009: any token of a family revokes the whole family, i.e. every pair issued from the same
   * authorization code (§2.1: "SHOULD also invalidate all access tokens based on the same
   * authorization grant"). An unknown token, or one of another client, changes nothing and is not
   * reported (§2.2).
   */
  async revoke(client: PartnerEntity, token: string): Promise<void> {
    await this.transactions.run(async (tx) => {
      const ended = await this.pairs.revokeFamilyOf(tx, sha256Hex(token), client.clientId);
      await this.cache.tombstone(client.clientId, ended);
    });
  }

  /**
   * The consent ends and every token of that partner for that member is revoked in the same
   * transaction. The consent row is locked first, so a racing grant either finishes before (its
   * new pair is revoked here) or starts after (and finds no consent).
   */
  async disconnect(userId: string, clientId: string): Promise<boolean> {
    return this.transactions.run(async (tx) => {
      if (!(await this.consents.end(tx, userId, clientId))) return false;
      await this.cache.tombstone(
        clientId,
        await this.pairs.revokeLive(tx, { userId, clientId }, 'disconnected'),
      );
      return true;
    });
  }

  /**
   * Suspension ends every live token of the partner at once. The partner's lock is taken first, so
   * a grant in flight commits before (its new pair is revoked here) and a later one finds the
   * partner suspended.
   */
  async setPartnerSuspended(clientId: string, suspended: boolean): Promise<number> {
    return this.transactions.run(async (tx) => {
      await this.pairs.lockPartner(tx, clientId);
      await this.partners.setSuspended(tx, clientId, suspended);
      if (!suspended) return 0;
      const digests = await this.pairs.revokeLive(tx, { clientId }, 'partner_suspended');
      await this.cache.tombstone(clientId, digests);
      return digests.length;
    });
  }

  /** What resource apps ask on a cache miss. Suspension ends a partner's tokens too. */
  async introspect(accessDigest: string): Promise<IntrospectResponse> {
    const pair = await this.pairs.findByAccessDigest(accessDigest);
    if (!pair || pair.revokedAt || pair.accessExpiresAt.getTime() <= Date.now()) return { active: false };
    const partner = await this.partners.findById(pair.clientId);
    if (!partner || partner.suspended) return { active: false };
    return {
      active: true,
      user_id: pair.userId,
      client_id: pair.clientId,
      scopes: pair.scopes,
      expires_at: pair.accessExpiresAt.toISOString(),
    };
  }

  /** A new pair's tokens (without its scope) and what is stored of them. */
  private newPair(): { tokens: Omit<TokenResponse, 'scope'>; next: NewPair } {
    const refreshToken = newSecret('rt_');
    const accessToken = this.derivation.accessTokenFor(refreshToken);
    const now = Date.now();
    return {
      tokens: {
        access_token: accessToken,
        token_type: 'Bearer',
        expires_in: this.config.ACCESS_TOKEN_TTL_SECONDS,
        refresh_token: refreshToken,
      },
      next: {
        id: newId('tkp', 16),
        accessDigest: sha256Hex(accessToken),
        refreshDigest: sha256Hex(refreshToken),
        accessExpiresAt: new Date(now + this.config.ACCESS_TOKEN_TTL_SECONDS * 1000),
        refreshExpiresAt: new Date(now + this.config.REFRESH_TOKEN_TTL_SECONDS * 1000),
      },
    };
  }
}

/** Rotations sent in one statement at most (a batch's locks are held until its commit). */
const MAX_REFRESH_BATCH = 16;

/** A refresh token arriving this soon after its rotation raced it; it is no retry after a lost response. */
export const REFRESH_RACE_WINDOW_MS = 1000;

const UNUSABLE = 'The refresh token is unknown, revoked or expired.';
const NOT_A_SCOPE = '(not a scope)';
const DISCONNECTED = 'The crew member has disconnected this application.';

/** The scopes a `scope` parameter names, each once, in its order. */
function requestedScopes(scope: string): string[] {
  return [...new Set(scope.split(' ').filter((s) => s !== ''))];
}

function failed(description: string): OAuthException {
  return new OAuthException('invalid_grant', description);
}

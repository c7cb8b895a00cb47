import { Inject, Injectable, Optional } from '@nestjs/common';
import { isScope, type IntrospectResponse, type TokenResponse } from '@svc/contracts';
import {
  APP_CONFIG,
  APP_LOGGER,
  AppMetrics,
  assertUnreachable,
  constantTimeEqual,
  newId,
  newSecret,
  sha256Hex,
  TransactionRunner,
  type ConfigOf,
  type Transaction,
} from '@svc/platform';
import { IntrospectionCache, type Introspector } from '@svc/security';
import { AuthorizeService } from '../authorize/authorize.service';
import type { AUTH_SERVER_CONFIG } from '../config';
import { ConsentsService } from '../consents/consents.service';
import { pkceChallenge } from '../crypto/secrets';
import { OAuthException } from '../oauth/oauth.exception';
import type { PartnerEntity } from '../partners/partner.entity';
import { PartnersService, RememberedClientStale } from '../partners/partners.service';
import type { Counter } from 'prom-client';
import type { Logger } from 'pino';
import type { TokenPairEntity } from './token-pair.entity';
import { AccessTokenDerivation } from './access-token-derivation';
import { ExchangeGroupCommit } from './exchange-group-commit';
import { RefreshGroupCommit } from './refresh-group-commit';
import {
  TokenPairsRepository,
  type NewPair,
  type RefreshOutcome,
  type RevocationReason,
} from './token-pairs.repository';

// RFC 7636 §4.1: 43-128 characters of the unreserved set.
const CODE_VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

// A failed grant is returned, not thrown, so that what its transaction revoked still commits.
type Outcome = TokenResponse | OAuthException;

@Injectable()
export class TokensService implements Introspector {
  private readonly reuse?: Counter<'outcome'>;
  private readonly derivation: AccessTokenDerivation;

  constructor(
    private readonly pairs: TokenPairsRepository,
    private readonly groupCommit: RefreshGroupCommit,
    private readonly exchanges: ExchangeGroupCommit,
    private readonly authorize: AuthorizeService,
    private readonly consents: ConsentsService,
    private readonly partners: PartnersService,
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
   * authorization_code grant (RFC 6749 §4.1.3, RFC 7636 §4.6). The code is consumed by its first
   * use whatever the outcome, so it cannot be guessed at; a second use is a replay, which also
   * revokes everything the code issued (RFC 9700 §4.5).
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
    const codeDigest = sha256Hex(input.code);
    const { tokens, next } = this.newPair();
    // The common case in one statement, which consumes the code whatever the outcome, shared with
    // the exchanges in flight beside it (its answer is the one it would have had alone).
    const result = await this.exchanges.exchange({
      codeDigest,
      clientId: client.clientId,
      secretDigest: client.secretDigest,
      // PostgreSQL text holds no NUL; such a URI was never registered, so it cannot match.
      redirectUri: input.redirectUri.includes('\u0000') ? '' : input.redirectUri,
      codeChallenge: pkceChallenge(input.codeVerifier),
      next,
      at: new Date(),
    });
    switch (result.outcome) {
      case 'issued':
        return { ...tokens, scope: result.scopes.join(' ') };
      case 'client':
        this.partners.forget(client.clientId);
        throw new RememberedClientStale(client.clientId);
      case 'unknown':
        throw failed('The authorization code is unknown.');
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
      case 'replayed':
        return this.exchangeReplayed(client, codeDigest, input);
      default:
        return assertUnreachable(result);
    }
  }

  /** A code presented again (or, racing, the first time): the rules below, in one transaction. */
  private async exchangeReplayed(
    client: PartnerEntity,
    codeDigest: string,
    input: { code: string; redirectUri: string; codeVerifier: string },
  ): Promise<TokenResponse> {
    return this.grant(async (tx) => {
      const code = await this.authorize.redeem(tx, codeDigest);
      if (!code) return failed('The authorization code is unknown.');
      if (code.consumedAt) {
        await this.pairs.lockFamily(tx, codeDigest);
        await this.revokeFamily(tx, code.clientId, codeDigest, 'code_replayed');
        return failed('The authorization code was already used; its tokens are revoked.');
      }
      if (code.expiresAt.getTime() <= Date.now()) return failed('The authorization code has expired.');
      if (code.clientId !== client.clientId) return failed('The code was issued to another client.');
      if (code.redirectUri !== input.redirectUri) {
        return failed('redirect_uri does not match the authorization request.');
      }
      if (!constantTimeEqual(pkceChallenge(input.codeVerifier), code.codeChallenge)) {
        return failed('code_verifier does not match the code_challenge.');
      }
      if (!(await this.consents.holdsActive(tx, code.userId, code.clientId))) {
        return failed(DISCONNECTED);
      }
      return (await this.issue(tx, code, code.scopes)).tokens;
    });
  }

  /**
   * refresh_token grant (RFC 6749 §6): rotation on every use, with reuse detection (RFC 9700
   * §4.14.2), under the family lock (the pairs of one code):
   * - a live token: its pair is replaced by a new one;
   * - the previous token (its successor unused) within REFRESH_RACE_WINDOW_MS of its rotation, or
   *   a token read live before the lock and rotated after it: a lost race, `invalid_grant`, the
   *   winner's pair stays valid;
   * - the previous token later, within REFRESH_TOKEN_REUSE_GRACE_SECONDS (a lost response): the
   *   successor is superseded and a new pair issued;
   * - any other rotated or superseded token: reuse; the whole family is revoked.
   */
  async refresh(
    client: PartnerEntity,
    input: { refreshToken: string; scope?: string; arrivedAt?: Date },
  ): Promise<TokenResponse> {
    // A name that is no scope cannot be granted; it goes as one PostgreSQL text can hold (no NUL).
    const requested =
      input.scope === undefined
        ? null
        : requestedScopes(input.scope).map((s) => (isScope(s) ? s : NOT_A_SCOPE));
    const { tokens, next, now } = this.newPair();
    const rotation = {
      refreshDigest: sha256Hex(input.refreshToken),
      clientId: client.clientId,
      secretDigest: client.secretDigest,
      scopes: requested,
      next,
      at: new Date(now),
    };
    const tombstoneFromRow = (ended: string) => this.cache.tombstone(client.clientId, [ended]);
    // The common case, a live token without a narrowing, is one statement in one round trip, shared
    // with the refreshes in flight beside it: its access token, derived from the refresh token, is
    // tombstoned first, so a rotation never commits before it. A narrowing (which may be refused and
    // must then leave the pair working) and a pair whose access token is not the derived one take a
    // transaction that tombstones before COMMIT.
    let result: RefreshOutcome;
    if (requested === null) {
      const expected = sha256Hex(this.derivation.accessTokenFor(input.refreshToken));
      result = await this.groupCommit.rotate(rotation, expected);
      if (result.outcome === 'unexpected') result = await this.pairs.rotateLive(rotation, tombstoneFromRow);
    } else {
      result = await this.pairs.rotateLive(rotation, tombstoneFromRow);
    }
    switch (result.outcome) {
      case 'rotated':
        return { ...tokens, scope: result.scopes.join(' ') };
      case 'client':
        this.partners.forget(client.clientId);
        throw new RememberedClientStale(client.clientId);
      case 'unusable':
        throw failed(UNUSABLE);
      case 'scope':
        throw narrowingRefused(result.scopes);
      case 'disconnected':
        throw failed(DISCONNECTED);
      case 'unexpected':
        // Only with an expected access token, and answered by the transaction above instead.
        throw new Error('token_refresh answered unexpected without an expected access token');
      case 'revoked':
        // Already rotated or revoked: a lost race, a retry after a lost response, or reuse.
        return this.refreshRevoked(client, input);
      default:
        return assertUnreachable(result);
    }
  }

  /**
   * A refresh token that was already revoked when read: the rules below, under the family lock;
   * also right for a live one (it is rotated), which a concurrent request may have made revoked.
   */
  private async refreshRevoked(
    client: PartnerEntity,
    input: { refreshToken: string; scope?: string; arrivedAt?: Date },
  ): Promise<TokenResponse> {
    const arrivedAt = input.arrivedAt ?? new Date();
    const digest = sha256Hex(input.refreshToken);
    return this.grant(async (tx) => {
      const seen = await this.pairs.findByRefreshDigest(tx, digest);
      if (!seen || seen.clientId !== client.clientId) return failed(UNUSABLE);
      await this.pairs.lockFamily(tx, seen.codeDigest);
      const pair = await this.pairs.findByRefreshDigest(tx, digest);
      if (!pair) return failed(UNUSABLE);

      if (!pair.revokedAt) {
        if (pair.refreshExpiresAt.getTime() <= Date.now()) return failed(UNUSABLE);
        return this.rotate(tx, pair, input.scope, pair.accessDigest);
      }

      if (pair.revokedReason !== 'rotated' && pair.revokedReason !== 'superseded') {
        return failed(UNUSABLE);
      }
      // Read live before the family lock: a rotation committed while this request was in flight.
      if (!seen.revokedAt) return failed(UNUSABLE);
      const successor = pair.replacedBy ? await this.pairs.findById(tx, pair.replacedBy) : null;
      // Set when the presented token is the immediately previous one: its successor is unused.
      const successorLive =
        pair.revokedReason === 'rotated' &&
        successor &&
        !successor.revokedAt &&
        successor.refreshExpiresAt.getTime() > Date.now()
          ? successor
          : null;
      const rotatedAt = pair.revokedAt.getTime();
      // Concurrent with the rotation (its connection may just have been accepted later): a lost race.
      if (successorLive && arrivedAt.getTime() < rotatedAt + REFRESH_RACE_WINDOW_MS) {
        return failed(UNUSABLE);
      }
      const graceMs = this.config.REFRESH_TOKEN_REUSE_GRACE_SECONDS * 1000;
      if (successorLive && graceMs > 0 && Date.now() - rotatedAt <= graceMs) {
        const tokens = await this.rotate(tx, pair, input.scope, successorLive.accessDigest, successorLive.id);
        this.reuse?.inc({ outcome: 'grace_reissued' });
        this.logger.info(
          { client_id: pair.clientId, user_id: pair.userId, pair_id: pair.id, superseded: successorLive.id },
          'auth-server: previous refresh token presented again within the grace window; re-issued',
        );
        return tokens;
      }

      const revoked = await this.revokeFamily(tx, pair.clientId, pair.codeDigest, 'reuse_detected');
      this.reuse?.inc({ outcome: 'family_revoked' });
      this.logger.warn(
        {
          client_id: pair.clientId,
          user_id: pair.userId,
          pair_id: pair.id,
          rotated_at: pair.revokedAt.toISOString(),
          revoked_pairs: revoked,
        },
        'auth-server: a rotated refresh token was presented again; its family is revoked',
      );
      return failed('The refresh token was already used; its tokens are revoked.');
    });
  }

  /**
   * RFC 7009: any token of a family revokes the whole family, i.e. every pair issued from the same
   * authorization code (§2.1: "SHOULD also invalidate all access tokens based on the same
   * authorization grant"). An unknown token, or one of another client, changes nothing and is not
   * reported (§2.2).
   */
  async revoke(client: PartnerEntity, token: string): Promise<void> {
    await this.transactions.run(async (tx) => {
      const pair = await this.pairs.findByEitherDigest(tx, sha256Hex(token));
      if (!pair || pair.clientId !== client.clientId) return;
      await this.pairs.lockFamily(tx, pair.codeDigest);
      await this.revokeFamily(tx, pair.clientId, pair.codeDigest, 'revoked');
    });
  }

  /**
   * The consent ends and every token of that partner for that member is revoked in the same
   * transaction. The consent row is locked first, so a racing refresh either finishes before (its
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

  /** Suspension ends every live token of the partner at once. */
  async setPartnerSuspended(clientId: string, suspended: boolean): Promise<number> {
    return this.transactions.run(async (tx) => {
      await this.partners.setSuspended(tx, clientId, suspended);
      if (!suspended) return 0;
      const digests = await this.pairs.revokeLive(tx, { clientId }, 'partner_suspended');
      await this.cache.tombstone(clientId, digests);
      return digests.length;
    });
  }

  private async grant(work: (tx: Transaction) => Promise<Outcome>): Promise<TokenResponse> {
    const outcome = await this.transactions.run(work);
    if (outcome instanceof OAuthException) throw outcome;
    return outcome;
  }

  /** Tombstones even pairs already revoked, so a retry after a failed attempt leaves the cache right. */
  private async revokeFamily(
    tx: Transaction,
    clientId: string,
    codeDigest: string,
    reason: RevocationReason,
  ): Promise<number> {
    const digests = await this.pairs.accessDigestsOfCode(tx, codeDigest);
    const revoked = await this.pairs.revokeLive(tx, { codeDigest }, reason);
    await this.cache.tombstone(clientId, digests);
    return revoked.length;
  }

  /** Replaces `pair` with a new pair (ending `supersededId` first) and tombstones `endedAccessDigest`. */
  private async rotate(
    tx: Transaction,
    pair: TokenPairEntity,
    scope: string | undefined,
    endedAccessDigest: string,
    supersededId?: string,
  ): Promise<TokenResponse> {
    const scopes = narrowedScopes(pair.scopes, scope);
    if (!(await this.consents.holdsActive(tx, pair.userId, pair.clientId))) {
      throw failed(DISCONNECTED);
    }
    if (supersededId) await this.pairs.revokeLive(tx, { pairId: supersededId }, 'superseded');
    const issued = await this.issue(tx, pair, scopes);
    await this.cache.tombstone(pair.clientId, [endedAccessDigest]);
    await this.pairs.markRotated(tx, pair.id, issued.pairId, new Date());
    return issued.tokens;
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
  private newPair(): { tokens: Omit<TokenResponse, 'scope'>; next: NewPair; now: number } {
    const refreshToken = newSecret('rt_');
    const accessToken = this.derivation.accessTokenFor(refreshToken);
    const now = Date.now();
    return {
      now,
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

  private async issue(
    tx: Transaction,
    { codeDigest, userId, clientId }: Pick<TokenPairEntity, 'codeDigest' | 'userId' | 'clientId'>,
    scopes: readonly string[],
  ): Promise<{ pairId: string; tokens: TokenResponse }> {
    const { tokens, next } = this.newPair();
    await this.pairs.insert(tx, { ...next, codeDigest, userId, clientId, scopes: [...scopes] });
    return { pairId: next.id, tokens: { ...tokens, scope: scopes.join(' ') } };
  }
}

/** A refresh token arriving this soon after its rotation raced it; it is no retry after a lost response. */
export const REFRESH_RACE_WINDOW_MS = 1000;

const UNUSABLE = 'The refresh token is unknown, revoked or expired.';
const NOT_A_SCOPE = '(not a scope)';
const DISCONNECTED = 'The crew member has disconnected this application.';

/** The scopes a `scope` parameter names, each once, in its order. */
function requestedScopes(scope: string): string[] {
  return [...new Set(scope.split(' ').filter((s) => s !== ''))];
}

function narrowingRefused(granted: readonly string[]): OAuthException {
  return new OAuthException(
    'invalid_scope',
    `The scope may only narrow the original grant (${granted.join(' ')}).`,
  );
}

/** RFC 6749 §6: a refresh may narrow the scope, never widen it. */
function narrowedScopes(granted: readonly string[], scope: string | undefined): string[] {
  if (scope === undefined) return [...granted];
  const requested = requestedScopes(scope);
  if (requested.length === 0 || requested.some((s) => !granted.includes(s))) throw narrowingRefused(granted);
  return requested;
}

function failed(description: string): OAuthException {
  return new OAuthException('invalid_grant', description);
}

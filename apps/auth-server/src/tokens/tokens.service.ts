import { Inject, Injectable } from '@nestjs/common';
import { ACCESS_TOKEN_PREFIX, type IntrospectResponse } from '@svc/contracts';
import { APP_CONFIG, TransactionRunner, type ConfigOf, type Transaction } from '@svc/platform';
import { IntrospectionCache } from '@svc/security';
import { AuthorizationCodesRepository } from '../authorize/authorization-codes.repository';
import type { AUTH_SERVER_CONFIG } from '../config';
import { ConsentsRepository } from '../consents/consents.repository';
import { constantTimeEqual, newId, newSecret, pkceChallenge, sha256Hex } from '../crypto/secrets';
import { OAuthException } from '../oauth/oauth.exception';
import type { PartnerEntity } from '../partners/partner.entity';
import { PartnersRepository } from '../partners/partners.repository';
import { TokenPairsRepository } from './token-pairs.repository';

/** The token response of interface.md (RFC 6749 §5.1). */
export interface IssuedTokens {
  readonly access_token: string;
  readonly token_type: 'Bearer';
  readonly expires_in: number;
  readonly refresh_token: string;
  readonly scope: string;
}

// RFC 7636 §4.1: 43-128 characters of the unreserved set.
const CODE_VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

type Outcome<T> = { ok: true; value: T } | { ok: false; error: OAuthException };

@Injectable()
export class TokensService {
  constructor(
    private readonly pairs: TokenPairsRepository,
    private readonly codes: AuthorizationCodesRepository,
    private readonly consents: ConsentsRepository,
    private readonly partners: PartnersRepository,
    private readonly transactions: TransactionRunner,
    private readonly cache: IntrospectionCache,
    @Inject(APP_CONFIG) private readonly config: ConfigOf<typeof AUTH_SERVER_CONFIG>,
  ) {}

  /**
   * authorization_code grant (RFC 6749 §4.1.3, RFC 7636 §4.6). The code is consumed by its first
   * use whatever the outcome, so it cannot be guessed at; a second use is a replay, which also
   * revokes everything the code issued (RFC 9700 §4.5).
   */
  async exchangeCode(
    client: PartnerEntity,
    input: { code: string; redirectUri: string; codeVerifier: string },
  ): Promise<IssuedTokens> {
    if (!CODE_VERIFIER.test(input.codeVerifier)) {
      throw new OAuthException(
        'invalid_request',
        'code_verifier must be 43-128 characters of [A-Za-z0-9-._~].',
      );
    }
    const codeDigest = sha256Hex(input.code);
    const outcome = await this.transactions.run(async (tx): Promise<Outcome<IssuedTokens>> => {
      const code = await this.codes.lock(tx, codeDigest);
      if (!code) return failed('invalid_grant', 'The authorization code is unknown.');
      if (code.consumedAt) {
        const digests = await this.pairs.accessDigestsOfCode(tx, codeDigest);
        await this.pairs.revokeLive(tx, { codeDigest }, 'code_replayed');
        await this.cache.tombstone(digests);
        return failed('invalid_grant', 'The authorization code was already used; its tokens are revoked.');
      }
      await this.codes.markConsumed(tx, codeDigest);
      if (code.expiresAt.getTime() <= Date.now())
        return failed('invalid_grant', 'The authorization code has expired.');
      if (code.clientId !== client.clientId)
        return failed('invalid_grant', 'The code was issued to another client.');
      if (code.redirectUri !== input.redirectUri) {
        return failed('invalid_grant', 'redirect_uri does not match the authorization request.');
      }
      if (!constantTimeEqual(pkceChallenge(input.codeVerifier), code.codeChallenge)) {
        return failed('invalid_grant', 'code_verifier does not match the code_challenge.');
      }
      if (!(await this.consents.lockActiveForShare(tx, code.userId, code.clientId))) {
        return failed('invalid_grant', 'The crew member has disconnected this application.');
      }
      return {
        ok: true,
        value: await this.issue(tx, code.codeDigest, code.userId, code.clientId, code.scopes),
      };
    });
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  }

  /**
   * refresh_token grant (RFC 6749 §6): rotation on every use. The old pair is revoked in the same
   * transaction that creates the new one; of concurrent refreshes with one token the row lock lets
   * exactly one through, on any number of replicas.
   */
  async refresh(
    client: PartnerEntity,
    input: { refreshToken: string; scope?: string },
  ): Promise<IssuedTokens> {
    return this.transactions.run(async (tx) => {
      const pair = await this.pairs.findByRefreshDigest(tx, sha256Hex(input.refreshToken));
      if (!pair || pair.clientId !== client.clientId) {
        throw new OAuthException('invalid_grant', 'The refresh token is unknown, revoked or expired.');
      }
      let scopes = pair.scopes;
      if (input.scope !== undefined) {
        const requested = [...new Set(input.scope.split(' ').filter((s) => s !== ''))];
        const wider = requested.filter((s) => !pair.scopes.includes(s));
        if (requested.length === 0 || wider.length > 0) {
          throw new OAuthException(
            'invalid_scope',
            `The scope may only narrow the original grant (${pair.scopes.join(' ')}).`,
          );
        }
        scopes = requested;
      }
      if (!(await this.consents.lockActiveForShare(tx, pair.userId, pair.clientId))) {
        throw new OAuthException('invalid_grant', 'The crew member has disconnected this application.');
      }
      if (!(await this.pairs.revokeIfLive(tx, pair.id, 'rotated'))) {
        throw new OAuthException('invalid_grant', 'The refresh token is unknown, revoked or expired.');
      }
      const issued = await this.issue(tx, pair.codeDigest, pair.userId, pair.clientId, scopes);
      await this.cache.tombstone([pair.accessDigest]);
      return issued;
    });
  }

  /**
   * RFC 7009: either token of a pair revokes both. An unknown token, or one of another client,
   * changes nothing and is not reported (§2.2). The tombstone is written even for a pair already
   * revoked, so retrying after a failed attempt always leaves the cache right.
   */
  async revoke(client: PartnerEntity, token: string): Promise<void> {
    await this.transactions.run(async (tx) => {
      const pair = await this.pairs.findByEitherDigest(tx, sha256Hex(token));
      if (!pair || pair.clientId !== client.clientId) return;
      await this.pairs.revokeLive(tx, { pairId: pair.id }, 'revoked');
      await this.cache.tombstone([pair.accessDigest]);
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

  private async issue(
    tx: Transaction,
    codeDigest: string,
    userId: string,
    clientId: string,
    scopes: readonly string[],
  ) {
    const accessToken = newSecret(ACCESS_TOKEN_PREFIX);
    const refreshToken = newSecret('rt_');
    const now = Date.now();
    await this.pairs.insert(tx, {
      id: newId('tkp_'),
      codeDigest,
      userId,
      clientId,
      scopes: [...scopes],
      accessDigest: sha256Hex(accessToken),
      refreshDigest: sha256Hex(refreshToken),
      accessExpiresAt: new Date(now + this.config.ACCESS_TOKEN_TTL_SECONDS * 1000),
      refreshExpiresAt: new Date(now + this.config.REFRESH_TOKEN_TTL_SECONDS * 1000),
    });
    return {
      access_token: accessToken,
      token_type: 'Bearer' as const,
      expires_in: this.config.ACCESS_TOKEN_TTL_SECONDS,
      refresh_token: refreshToken,
      scope: scopes.join(' '),
    };
  }
}

function failed(code: 'invalid_grant', description: string): { ok: false; error: OAuthException } {
  return { ok: false, error: new OAuthException(code, description) };
}

import type { TokenResponse } from '@svc/contracts';
import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { FailedAuthLimiter } from '@svc/security';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OAuthException } from '../oauth/oauth.exception';
import type { PartnerEntity } from '../partners/partner.entity';
import { PartnersService, RememberedClientStale } from '../partners/partners.service';
import { readClientCredentials, readOAuthForm, required, type OAuthForm } from './dto/token-form.dto';
import { TokenMetrics } from './token-metrics';
import { TokensService } from './tokens.service';

@Controller('oauth')
export class TokenController {
  constructor(
    private readonly partners: PartnersService,
    private readonly tokens: TokensService,
    private readonly failures: FailedAuthLimiter,
    private readonly metrics: TokenMetrics,
  ) {}

  /**
   * Under the failed-authentication limit per address, where every `invalid_client` counts.
   * `remembered`: from this process's memory when the secret matched before, for a grant whose
   * statement checks the partner row again.
   */
  private authenticateClient(
    request: FastifyRequest,
    form: OAuthForm,
    remembered = false,
  ): Promise<PartnerEntity> {
    return this.failures.limit(
      'client',
      request,
      () => {
        const credentials = readClientCredentials(request.headers.authorization, form);
        return remembered
          ? this.partners.authenticateRemembered(credentials)
          : this.partners.authenticate(credentials);
      },
      (err) => err instanceof OAuthException && err.code === 'invalid_client',
    );
  }

  /** RFC 6749 §3.2. Token responses must not be cached (§5.1). */
  @Post('token')
  @HttpCode(200)
  async token(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<TokenResponse> {
    // When the request arrived (Fastify's onRequest), before any wait for the database.
    const arrived = performance.now() - reply.elapsedTime;
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    const grantType = (request.body as Record<string, unknown> | undefined)?.grant_type;
    try {
      const issued = await this.exchange(request, arrived);
      this.metrics.issued(grantType);
      return issued;
    } catch (err) {
      this.metrics.refused(grantType, err);
      throw err;
    }
  }

  private async exchange(request: FastifyRequest, arrived: number): Promise<TokenResponse> {
    const form = readOAuthForm(request);
    // Both grants' statements check the partner row themselves, so they may start from memory.
    const remembered = form.grant_type === 'refresh_token' || form.grant_type === 'authorization_code';
    const client = await this.authenticateClient(request, form, remembered);
    try {
      return await this.grant(form, client, arrived);
    } catch (err) {
      if (!(err instanceof RememberedClientStale)) throw err;
      // The table disagreed with this process's memory (a rotated secret, a suspension): ask it.
      const current = await this.authenticateClient(request, form);
      return this.grant(form, current, arrived).catch((again: unknown) => {
        if (again instanceof RememberedClientStale) {
          throw new OAuthException('invalid_client', 'Client authentication failed.');
        }
        throw again;
      });
    }
  }

  private grant(form: OAuthForm, client: PartnerEntity, arrived: number): Promise<TokenResponse> {
    const grantType = required(form, 'grant_type');
    switch (grantType) {
      case 'authorization_code':
        return this.tokens.exchangeCode(client, {
          code: required(form, 'code'),
          redirectUri: required(form, 'redirect_uri'),
          codeVerifier: required(form, 'code_verifier'),
        });
      case 'refresh_token':
        return this.tokens.refresh(client, {
          refreshToken: required(form, 'refresh_token'),
          scope: form.scope,
          arrivedAt: arrived,
        });
      default:
        throw new OAuthException(
          'unsupported_grant_type',
          'Supported grants: authorization_code, refresh_token.',
        );
    }
  }

  /** RFC 7009 §2: 200 with an empty body, also for unknown or foreign tokens. */
  @Post('revoke')
  @HttpCode(200)
  async revoke(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<void> {
    reply.header('cache-control', 'no-store');
    const form = readOAuthForm(request);
    const client = await this.authenticateClient(request, form);
    await this.tokens.revoke(client, required(form, 'token'));
  }
}

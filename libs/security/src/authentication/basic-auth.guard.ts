import { Injectable, Optional } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { ApiProblem } from '@svc/platform';
import { BasicStrategy as PassportBasicStrategy } from 'passport-http';
import { LimitedAuthGuard } from './bearer-auth.guard';
import { FailedAuthLimiter } from '../limits/failed-auth-limiter';
import type { PartnerPrincipal } from './partner.guard';
import { PartnerVerifier } from './partner-verifier';

export const PARTNERS_REALM = 'partners';

/**
 * The credentials part of `Basic <base64>` must be exactly one `client_id:client_secret` pair:
 * passport-http splits at every colon and would take `secret:anything` for `secret`, and accepts
 * any scheme that merely contains "basic". Issued ids and secrets never contain a colon.
 */
export function isWellFormedBasic(authorization: string): boolean {
  const m = /^Basic ([A-Za-z0-9+/]+={0,2})$/i.exec(authorization.trim());
  if (!m) return false;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  return decoded.split(':').length === 2;
}

/** passport-http's Basic strategy as `basic`: `client_id:client_secret` (docs/rules.md, Authentication). */
@Injectable()
export class BasicStrategy extends PassportStrategy(PassportBasicStrategy, 'basic') {
  constructor(private readonly verifier: PartnerVerifier) {
    super({ passReqToCallback: true, realm: PARTNERS_REALM });
  }

  /** The partner, or false for "not these credentials" (a malformed header included: never asked). */
  async validate(
    request: { readonly headers: { readonly authorization?: string } },
    clientId: string,
    secret: string,
  ): Promise<PartnerPrincipal | false> {
    if (!isWellFormedBasic(request.headers.authorization ?? '')) return false;
    return (await this.verifier.verify(clientId, secret)) ?? false;
  }
}

/**
 * A partner's valid credentials in `Authorization: Basic …` put it on the request; otherwise 401
 * `invalid_token` with the Basic challenge (docs/rules.md).
 */
@Injectable()
export class BasicAuthGuard extends LimitedAuthGuard('basic', 'client') {
  constructor(@Optional() failures?: FailedAuthLimiter) {
    super(failures);
  }

  protected unauthenticated(): ApiProblem {
    return new ApiProblem(
      'invalid_token',
      'This endpoint needs HTTP Basic credentials: your client_id as the user name and your client_secret as the password.',
      { headers: { 'www-authenticate': `Basic realm="${PARTNERS_REALM}"` } },
    );
  }
}

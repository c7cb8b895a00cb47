import { Injectable, Optional, type ExecutionContext } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import { ApiProblem } from '@svc/platform';
import { PARTNERS_REALM, type BasicAuthenticateOptions } from './basic.strategy';
import { limitFailures } from './bearer-auth.guard';
import { FailedAuthLimiter } from './failed-auth-limiter';
import type { PartnerPrincipal } from './partner-principal';
import { PartnerVerifier } from './partner-verifier';

export const BASIC_CHALLENGE = `Basic realm="${PARTNERS_REALM}"`;

export function badPartnerCredentialsProblem(): ApiProblem {
  return new ApiProblem(
    'invalid_token',
    'This endpoint needs HTTP Basic credentials: your client_id as the user name and your client_secret as the password.',
    { headers: { 'www-authenticate': BASIC_CHALLENGE } },
  );
}

/**
 * A partner's valid credentials in `Authorization: Basic …` put it on the request; otherwise 401
 * `invalid_token` with the Basic challenge (docs/rules.md), or 503 when auth-server is unavailable.
 */
@Injectable()
export class BasicAuthGuard extends AuthGuard('basic') {
  constructor(
    private readonly verifier: PartnerVerifier,
    @Optional() private readonly failures?: FailedAuthLimiter,
  ) {
    super();
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    return limitFailures(
      this.failures,
      'client',
      context,
      async () => (await super.canActivate(context)) as boolean,
    );
  }

  override getAuthenticateOptions(): BasicAuthenticateOptions {
    return { verifier: this.verifier };
  }

  override handleRequest<TUser = PartnerPrincipal>(err: unknown, user: unknown): TUser {
    if (err) throw err;
    if (user) return user as TUser;
    throw badPartnerCredentialsProblem();
  }
}

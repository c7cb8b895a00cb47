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
 * Lets a request through with a partner's valid client credentials in `Authorization: Basic …`
 * and puts the partner on the request (`@Partner()`, and `client_id` for the rate limiter).
 * Otherwise 401 `invalid_token` with `WWW-Authenticate: Basic realm="partners"` (docs/rules.md);
 * an unavailable auth-server is 503 (fail closed). An address with too many failed client
 * authentications is refused with 429 before the credentials are checked (FailedAuthLimiter).
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

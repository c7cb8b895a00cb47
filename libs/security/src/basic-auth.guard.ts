import { Injectable, Optional } from '@nestjs/common';
import { ApiProblem } from '@svc/platform';
import { PARTNERS_REALM } from './basic.strategy';
import { LimitedAuthGuard } from './bearer-auth.guard';
import { FailedAuthLimiter } from './failed-auth-limiter';

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

import { Injectable, Optional, type ExecutionContext } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import { ApiProblem } from '@svc/platform';
import { unauthenticatedProblem, type RequestCredentials } from './bearer-challenge';
import type { BearerAuthenticateOptions } from './bearer.strategy';
import { FailedAuthLimiter, type FailedAuthKind } from './failed-auth-limiter';
import { isMetered, keepDecision } from './metering';
import type { RateLimitDecision } from './rate-limit-decision';
import { RateLimiter } from './rate-limiter';
import { TokenAuthenticator } from './token-authenticator';

/**
 * passport's `strategy` under the failed-authentication limit of `kind`, where every 401 counts.
 * A missing user is the subclass's 401; 503 when auth-server is unavailable (fail closed).
 */
export function LimitedAuthGuard(strategy: string, kind: FailedAuthKind) {
  abstract class Guard extends AuthGuard(strategy) {
    constructor(readonly failures?: FailedAuthLimiter) {
      super();
    }

    override async canActivate(context: ExecutionContext): Promise<boolean> {
      const authenticate = async () => (await super.canActivate(context)) as boolean;
      if (!this.failures) return authenticate();
      return this.failures.limit(
        kind,
        context.switchToHttp().getRequest(),
        authenticate,
        (err) => err instanceof ApiProblem && err.status === 401,
      );
    }

    override handleRequest<TUser>(
      err: unknown,
      user: unknown,
      _info: unknown,
      context: ExecutionContext,
    ): TUser {
      if (err) throw err;
      if (user) return user as TUser;
      throw this.unauthenticated(context);
    }

    protected abstract unauthenticated(context: ExecutionContext): ApiProblem;
  }
  return Guard;
}

/**
 * A live access token in `Authorization: Bearer …` puts its Principal on the request; otherwise
 * 401 with the RFC 6750 §3.1 challenge. On a metered route the same Redis call counts the request
 * (a revoked token's is not counted), for RateLimitGuard to apply.
 */
@Injectable()
export class BearerAuthGuard extends LimitedAuthGuard('bearer', 'bearer') {
  constructor(
    private readonly authenticator: TokenAuthenticator,
    /** This module's limiter, the one its RateLimitGuard would count with. */
    private readonly limiter: RateLimiter,
    @Optional() failures?: FailedAuthLimiter,
  ) {
    super(failures);
  }

  override getAuthenticateOptions(context: ExecutionContext): BearerAuthenticateOptions {
    const request = context.switchToHttp().getRequest<object>();
    const { authenticator, limiter } = this;
    if (!isMetered(request)) return { authenticator };
    const onDecision = (decision: RateLimitDecision) => keepDecision(request, decision);
    return {
      authenticator: { authenticate: (token) => authenticator.authenticate(token, { limiter, onDecision }) },
    };
  }

  protected unauthenticated(context: ExecutionContext): ApiProblem {
    return unauthenticatedProblem(context.switchToHttp().getRequest<RequestCredentials>());
  }
}

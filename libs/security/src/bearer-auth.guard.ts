import { Injectable, Optional, type ExecutionContext } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import { ApiProblem } from '@svc/platform';
import { unauthenticatedProblem, type RequestCredentials } from './bearer-challenge';
import { FailedAuthLimiter, type FailedAuthKind } from './failed-auth-limiter';

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
 * A live access token in `Authorization: Bearer …` puts its Principal on the request (BearerStrategy);
 * otherwise 401 with the RFC 6750 §3.1 challenge.
 */
@Injectable()
export class BearerAuthGuard extends LimitedAuthGuard('bearer', 'bearer') {
  constructor(@Optional() failures?: FailedAuthLimiter) {
    super(failures);
  }

  protected unauthenticated(context: ExecutionContext): ApiProblem {
    return unauthenticatedProblem(context.switchToHttp().getRequest<RequestCredentials>());
  }
}

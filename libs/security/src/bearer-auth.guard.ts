import { Injectable, Optional, type ExecutionContext } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import { ApiProblem } from '@svc/platform';
import { unauthenticatedProblem, type RequestCredentials } from './bearer-challenge';
import type { BearerAuthenticateOptions } from './bearer.strategy';
import { FailedAuthLimiter, type FailedAuthKind } from './failed-auth-limiter';
import type { Principal } from './principal';
import { TokenAuthenticator } from './token-authenticator';

/**
 * A live access token in `Authorization: Bearer …` puts its Principal on the request; otherwise
 * 401 with the RFC 6750 §3.1 challenge, or 503 when auth-server is unavailable (fail closed).
 * Every 401 counts against the address's failed-authentication limit.
 */
@Injectable()
export class BearerAuthGuard extends AuthGuard('bearer') {
  constructor(
    private readonly authenticator: TokenAuthenticator,
    @Optional() private readonly failures?: FailedAuthLimiter,
  ) {
    super();
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    return limitFailures(
      this.failures,
      'bearer',
      context,
      async () => (await super.canActivate(context)) as boolean,
    );
  }

  override getAuthenticateOptions(): BearerAuthenticateOptions {
    return { authenticator: this.authenticator };
  }

  override handleRequest<TUser = Principal>(
    err: unknown,
    user: unknown,
    _info: unknown,
    context: ExecutionContext,
  ): TUser {
    if (err) throw err;
    if (user) return user as TUser;
    throw unauthenticatedProblem(context.switchToHttp().getRequest<RequestCredentials>());
  }
}

/** Runs an authenticating guard under the failed-authentication limit, where every 401 counts. */
export function limitFailures(
  failures: FailedAuthLimiter | undefined,
  kind: FailedAuthKind,
  context: ExecutionContext,
  authenticate: () => Promise<boolean>,
): Promise<boolean> {
  if (!failures) return authenticate();
  return failures.limit(
    kind,
    context.switchToHttp().getRequest(),
    authenticate,
    (err) => err instanceof ApiProblem && err.status === 401,
  );
}

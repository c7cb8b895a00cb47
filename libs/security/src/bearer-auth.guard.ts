import { Injectable, type ExecutionContext } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import { unauthenticatedProblem, type RequestCredentials } from './bearer-challenge';
import type { BearerAuthenticateOptions } from './bearer.strategy';
import type { Principal } from './principal';
import { TokenAuthenticator } from './token-authenticator';

/**
 * Lets a request through with a live access token in `Authorization: Bearer …` and puts its
 * Principal on the request (`@Principal()`). Otherwise 401 `invalid_token` with the RFC 6750 §3.1
 * challenge; an unavailable auth-server is 503 `service_unavailable` (fail closed).
 */
@Injectable()
export class BearerAuthGuard extends AuthGuard('bearer') {
  constructor(private readonly authenticator: TokenAuthenticator) {
    super();
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

import {
  createParamDecorator,
  Injectable,
  Optional,
  SetMetadata,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard, PassportStrategy } from '@nestjs/passport';
import type { CachedIntrospection, Scope } from '@svc/contracts';
import { ApiProblem } from '@svc/platform';
import type * as passport from 'passport';
import { Strategy } from 'passport-http-bearer';
import { FailedAuthLimiter, type FailedAuthKind } from '../limits/failed-auth-limiter';
import { isMetered, keepDecision, RateLimiter, type RateLimitDecision } from '../limits/rate-limit';
import { TokenAuthenticator } from './token-authenticator';

/*
 * A bearer token on a resource endpoint (RFC 6750): who is calling (Principal), the strategy that
 * turns the token into one, the guard that answers 401 without one, and the guard that answers 403
 * when its scopes fall short.
 */

/** Who is calling: the subject, the partner and the grant of a live access token. */
export type Principal = Omit<Extract<CachedIntrospection, { active: true }>, 'active'>;

/** A request behind BearerAuthGuard: passport's slot holds the Principal. */
type BearerGuarded = { readonly user?: Principal };

/** `@Principal()` behind BearerAuthGuard; without it a programming error (500), never anonymous. */
export const Principal = createParamDecorator((_data: unknown, context: ExecutionContext): Principal => {
  const principal = context.switchToHttp().getRequest<BearerGuarded>().user;
  if (!principal) throw new Error('@Principal() is used on a route without BearerAuthGuard');
  return principal;
});

/*
 * RFC 6750 §3, docs/rules.md "Errors and auth on resource endpoints": challenges without a realm
 * or an error_description, the exact header shape partners are told to expect.
 */

interface RequestCredentials {
  readonly headers: { readonly authorization?: string };
}

type BearerRequest = RequestCredentials & Parameters<typeof isMetered>[0];

/** Requests that came with an `access_token` parameter, taken off before passport looks: for the 401. */
const withTokenParameter = new WeakSet<object>();

/**
 * RFC 6750 §2.2/§2.3 (the `access_token` form-body and query methods) are never accepted: a token in
 * a URL ends up in logs, history and Referer headers (§5.3), and a parameter sent beside the header
 * must not turn a good request into a failure. passport-http-bearer reads both, so the parameter is
 * taken off the request before it looks.
 */
function dropTokenParameters(request: { readonly query?: unknown; readonly body?: unknown }): void {
  for (const bag of [request.query, request.body]) {
    if (typeof bag !== 'object' || bag === null || !('access_token' in bag)) continue;
    withTokenParameter.add(request);
    delete (bag as { access_token?: unknown }).access_token;
  }
}

/**
 * passport-http-bearer, registered with passport as `bearer`. On a metered route the same Redis
 * call that checks the token counts the request (a revoked token's is not counted), for
 * RateLimitGuard to apply; this module's limiter is the one its RateLimitGuard counts with.
 */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(
    private readonly authenticator: TokenAuthenticator,
    private readonly limiter: RateLimiter,
  ) {
    super({ passReqToCallback: true });
  }

  override authenticate(request: Parameters<passport.Strategy['authenticate']>[0], options?: object): void {
    dropTokenParameters(request);
    super.authenticate(request, options);
  }

  /** A Principal, or false for "not a live token". */
  async validate(request: BearerRequest, token: string): Promise<Principal | false> {
    const metering = isMetered(request)
      ? {
          limiter: this.limiter,
          onDecision: (decision: RateLimitDecision) => keepDecision(request, decision),
        }
      : undefined;
    return (await this.authenticator.authenticate(token, metering)) ?? false;
  }
}

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

  /**
   * RFC 6750 §3.1: no bearer credentials (or an unsupported method) get a challenge without an
   * error code; a bad bearer token gets `error="invalid_token"`.
   */
  protected unauthenticated(context: ExecutionContext): ApiProblem {
    const request = context.switchToHttp().getRequest<RequestCredentials>();
    // Scheme names are case-insensitive (RFC 9110 §11.1).
    if (/^bearer(?:\s|$)/i.test(request.headers.authorization?.trim() ?? '')) {
      return new ApiProblem(
        'invalid_token',
        'The access token is malformed, unknown, expired or revoked; obtain a new one.',
        { headers: { 'www-authenticate': 'Bearer error="invalid_token"' } },
      );
    }
    return new ApiProblem(
      'invalid_token',
      withTokenParameter.has(request)
        ? 'Access tokens are accepted only in the Authorization header (`Authorization: Bearer <token>`), ' +
            'never as an access_token parameter (RFC 6750 §2.1, §5.3).'
        : 'This endpoint needs an access token: send `Authorization: Bearer <token>` (RFC 6750 §2.1).',
      { headers: { 'www-authenticate': 'Bearer' } },
    );
  }
}

export const REQUIRED_SCOPES = 'svc:security:required-scopes';

/** Every scope listed is required; a method's list replaces its controller's. */
export const RequireScopes = (...scopes: Scope[]) => SetMetadata(REQUIRED_SCOPES, scopes);

/** Runs after BearerAuthGuard: 403 `insufficient_scope` naming every scope needed (RFC 6750 §3.1). */
@Injectable()
export class ScopeGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const required =
      this.reflector.getAllAndOverride<readonly Scope[] | undefined>(REQUIRED_SCOPES, [
        context.getHandler(),
        context.getClass(),
      ]) ?? [];
    const principal = context.switchToHttp().getRequest<BearerGuarded>().user;
    // Without BearerAuthGuard in front there is nobody to check: a wiring mistake, never a pass.
    if (!principal) throw new Error('ScopeGuard runs only after BearerAuthGuard');
    if (required.every((scope) => principal.scopes.includes(scope))) return true;
    const scopes = required.join(' ');
    throw new ApiProblem(
      'insufficient_scope',
      `This endpoint needs an access token with the scope${required.length > 1 ? 's' : ''} ${scopes}.`,
      { headers: { 'www-authenticate': `Bearer error="insufficient_scope", scope="${scopes}"` } },
    );
  }
}

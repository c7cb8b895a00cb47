import { Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Scope } from '@svc/contracts';
import { ApiProblem } from '@svc/platform';
import { principalOf } from './principal';

export const REQUIRED_SCOPES = 'svc:security:required-scopes';

/** Every scope listed is required; a method's list replaces its controller's. */
export const RequireScopes = (...scopes: Scope[]) => SetMetadata(REQUIRED_SCOPES, scopes);

/** 403 `insufficient_scope` naming every scope the endpoint needs (RFC 6750 §3.1). */
function insufficientScopeProblem(required: readonly string[]): ApiProblem {
  const scopes = required.join(' ');
  return new ApiProblem(
    'insufficient_scope',
    `This endpoint needs an access token with the scope${required.length > 1 ? 's' : ''} ${scopes}.`,
    { headers: { 'www-authenticate': `Bearer error="insufficient_scope", scope="${scopes}"` } },
  );
}

/** Runs after BearerAuthGuard: 403 `insufficient_scope` naming the needed scopes (RFC 6750 §3.1). */
@Injectable()
export class ScopeGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const required =
      this.reflector.getAllAndOverride<readonly Scope[] | undefined>(REQUIRED_SCOPES, [
        context.getHandler(),
        context.getClass(),
      ]) ?? [];
    const principal = principalOf(context.switchToHttp().getRequest<{ user?: unknown }>());
    // Without BearerAuthGuard in front there is nobody to check: a wiring mistake, never a pass.
    if (!principal) throw new Error('ScopeGuard runs only after BearerAuthGuard');
    if (required.every((scope) => principal.scopes.includes(scope))) return true;
    throw insufficientScopeProblem(required);
  }
}

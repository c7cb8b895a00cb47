import { applyDecorators, UseGuards } from '@nestjs/common';
import type { Scope } from '@svc/contracts';
import { BearerAuthGuard } from './bearer-auth.guard';
import { RequireScopes, ScopeGuard } from './scope.guard';

/**
 * `@BearerAuth('profile:read')` on a controller or handler: a live access token with every listed
 * scope (none listed: any live token). The guards run in this order: 401 before 403.
 */
export const BearerAuth = (...scopes: Scope[]) =>
  applyDecorators(UseGuards(BearerAuthGuard, ScopeGuard), RequireScopes(...scopes));

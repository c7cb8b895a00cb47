import { applyDecorators, UseGuards } from '@nestjs/common';
import type { Scope } from '@svc/contracts';
import { BearerAuthGuard } from './bearer-auth.guard';
import { RateLimitGuard } from './rate-limit.guard';
import { RequireScopes, ScopeGuard } from './scope.guard';

/**
 * `@BearerAuth('profile:read')` on a controller or handler: a live access token with every listed
 * scope (none listed: any live token), within the client's rate limits. The guards run in this
 * order: 401 (not counted), then the rate limit (429, or the X-RateLimit-* headers), then 403
 * (counted, with the headers). Only `/v1/*` routes are metered (RATE_LIMITED_PATH_PREFIX).
 */
export const BearerAuth = (...scopes: Scope[]) =>
  applyDecorators(UseGuards(BearerAuthGuard, RateLimitGuard, ScopeGuard), RequireScopes(...scopes));

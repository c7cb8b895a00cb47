import { applyDecorators, UseGuards } from '@nestjs/common';
import type { Scope } from '@svc/contracts';
import { RateLimitGuard } from '../limits/rate-limit';
import { BearerAuthGuard, RequireScopes, ScopeGuard } from './bearer-auth.guard';

/**
 * `@BearerAuth('profile:read')`: a live access token with every listed scope, within the rate
 * limits. In order: 401 (not counted), the rate limit, then 403 (counted, with the headers).
 */
export const BearerAuth = (...scopes: Scope[]) =>
  applyDecorators(UseGuards(BearerAuthGuard, RateLimitGuard, ScopeGuard), RequireScopes(...scopes));

import {
  applyDecorators,
  createParamDecorator,
  Injectable,
  SetMetadata,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { VerifiedPartner } from '@svc/contracts';
import { ApiProblem } from '@svc/platform';
import { BasicAuthGuard } from './basic-auth.guard';
import { RateLimitGuard } from '../limits/rate-limit';

/** The partner calling a `/v1/partners/*` endpoint, as auth-server vouched for it. */
export type PartnerPrincipal = VerifiedPartner;

export function partnerOf(request: { user?: unknown }): PartnerPrincipal | undefined {
  const user = request.user as Partial<PartnerPrincipal> | undefined;
  return typeof user?.sponsorship === 'boolean' ? (user as PartnerPrincipal) : undefined;
}

/** `@Partner() partner: PartnerPrincipal` in a handler behind `@PartnerAuth()`. */
export const Partner = createParamDecorator((_data: unknown, context: ExecutionContext): PartnerPrincipal => {
  const partner = partnerOf(context.switchToHttp().getRequest<{ user?: unknown }>());
  if (!partner) throw new Error('@Partner() is used on a route without BasicAuthGuard');
  return partner;
});

/** The partner BasicAuthGuard put on the request, unless suspended (403 `insufficient_scope`). */
function activePartner(context: ExecutionContext, guard: string): PartnerPrincipal {
  const partner = partnerOf(context.switchToHttp().getRequest<{ user?: unknown }>());
  if (!partner) throw new Error(`${guard} runs only after BasicAuthGuard`);
  if (partner.suspended) {
    throw new ApiProblem('insufficient_scope', 'This partner account is suspended; contact partner support.');
  }
  return partner;
}

const NEEDS_MEMBER_LEFT = 'svc:security:needs-member-left';

/**
 * After BasicAuthGuard and the rate limit: a partner in the sponsorship program, not suspended
 * (and flagged for member-left where needed); otherwise 403 `insufficient_scope` (docs/rules.md).
 */
@Injectable()
export class PartnerProgramGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const partner = activePartner(context, 'PartnerProgramGuard');
    if (!partner.sponsorship) {
      throw new ApiProblem('insufficient_scope', 'This partner is not in a sponsorship program.');
    }
    const needsMemberLeft = this.reflector.getAllAndOverride<boolean | undefined>(NEEDS_MEMBER_LEFT, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (needsMemberLeft && !partner.member_left) {
      throw new ApiProblem('insufficient_scope', 'This partner is not allowed to report members who left.');
    }
    return true;
  }
}

/** `@PartnerAuth()`: Basic credentials (401, not counted), the rate limits, then PartnerProgramGuard. */
export const PartnerAuth = (options: { readonly memberLeft?: boolean } = {}) =>
  applyDecorators(
    UseGuards(BasicAuthGuard, RateLimitGuard, PartnerProgramGuard),
    SetMetadata(NEEDS_MEMBER_LEFT, options.memberLeft === true),
  );

/**
 * After BasicAuthGuard and the rate limit: any partner that is not suspended (403
 * `insufficient_scope`, as on every `/v1/partners/*` route). Unlike PartnerProgramGuard, no
 * program is required: every partner has webhooks and a portal.
 */
@Injectable()
export class ActivePartnerGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    activePartner(context, 'ActivePartnerGuard');
    return true;
  }
}

/** `@ActivePartnerAuth()`: Basic credentials (401, not counted), the rate limits, then an active partner. */
export const ActivePartnerAuth = () =>
  applyDecorators(UseGuards(BasicAuthGuard, RateLimitGuard, ActivePartnerGuard));

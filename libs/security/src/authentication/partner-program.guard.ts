import {
  applyDecorators,
  Injectable,
  SetMetadata,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiProblem } from '@svc/platform';
import { BasicAuthGuard } from './basic-auth.guard';
import { partnerOf } from './partner-principal';
import { RateLimitGuard } from '../limits/rate-limit';

const NEEDS_MEMBER_LEFT = 'svc:security:needs-member-left';

/**
 * After BasicAuthGuard and the rate limit: a partner in the sponsorship program, not suspended
 * (and flagged for member-left where needed); otherwise 403 `insufficient_scope` (docs/rules.md).
 */
@Injectable()
export class PartnerProgramGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const partner = partnerOf(context.switchToHttp().getRequest<{ user?: unknown }>());
    if (!partner) throw new Error('PartnerProgramGuard runs only after BasicAuthGuard');
    if (partner.suspended) {
      throw new ApiProblem(
        'insufficient_scope',
        'This partner account is suspended; contact partner support.',
      );
    }
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

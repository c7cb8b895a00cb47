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
import { RateLimitGuard } from './rate-limit.guard';

const NEEDS_MEMBER_LEFT = 'svc:security:needs-member-left';

/**
 * Runs after BasicAuthGuard and the rate limit: the partner must be in the sponsorship program and
 * not suspended, and for member-left be the partner flagged for it. Each refusal is 403
 * `insufficient_scope` (docs/rules.md), counted and carrying the rate-limit headers.
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

/**
 * `@PartnerAuth()` on a partner endpoint: Basic client credentials (401, not counted), the
 * client's rate limits (429, or the headers), then the program checks (403, counted).
 * `{ memberLeft: true }` also requires the member-left flag.
 */
export const PartnerAuth = (options: { readonly memberLeft?: boolean } = {}) =>
  applyDecorators(
    UseGuards(BasicAuthGuard, RateLimitGuard, PartnerProgramGuard),
    SetMetadata(NEEDS_MEMBER_LEFT, options.memberLeft === true),
  );

import {
  applyDecorators,
  Injectable,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { ApiProblem } from '@svc/platform';
import { BasicAuthGuard } from './basic-auth.guard';
import { partnerOf } from './partner-principal';
import { RateLimitGuard } from '../limits/rate-limit';

/**
 * After BasicAuthGuard and the rate limit: any partner that is not suspended (403
 * `insufficient_scope`, as on every `/v1/partners/*` route). Unlike PartnerProgramGuard, no
 * program is required: every partner has webhooks and a portal.
 */
@Injectable()
export class ActivePartnerGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const partner = partnerOf(context.switchToHttp().getRequest<{ user?: unknown }>());
    if (!partner) throw new Error('ActivePartnerGuard runs only after BasicAuthGuard');
    if (partner.suspended) {
      throw new ApiProblem(
        'insufficient_scope',
        'This partner account is suspended; contact partner support.',
      );
    }
    return true;
  }
}

/** `@ActivePartnerAuth()`: Basic credentials (401, not counted), the rate limits, then an active partner. */
export const ActivePartnerAuth = () =>
  applyDecorators(UseGuards(BasicAuthGuard, RateLimitGuard, ActivePartnerGuard));

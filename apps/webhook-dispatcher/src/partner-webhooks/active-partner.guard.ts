import {
  applyDecorators,
  Injectable,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { ApiProblem } from '@svc/platform';
import { BasicAuthGuard, partnerOf, RateLimitGuard } from '@svc/security';

/**
 * After BasicAuthGuard and the rate limit: any partner that is not suspended (403
 * `insufficient_scope`, docs/rules.md). Unlike the sponsorship API's PartnerProgramGuard, no
 * program is required: every partner receives webhooks.
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

/** `@WebhookPartnerAuth()`: Basic credentials (401, not counted), the rate limits, then an active partner. */
export const WebhookPartnerAuth = () =>
  applyDecorators(UseGuards(BasicAuthGuard, RateLimitGuard, ActivePartnerGuard));

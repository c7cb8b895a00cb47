import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { ApiProblem } from '@svc/platform';
import { partnerOf } from '@svc/security';

/**
 * After BasicAuthGuard and the rate limit: any partner that is not suspended (403
 * `insufficient_scope`, as on every `/v1/partners/*` route). No program is required: every
 * partner has webhooks to look at.
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

import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { VerifiedPartner } from '@svc/contracts';

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

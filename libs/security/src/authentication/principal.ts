import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { CachedIntrospection } from '@svc/contracts';

/** Who is calling: the subject, the partner and the grant of a live access token. */
export type Principal = Omit<Extract<CachedIntrospection, { active: true }>, 'active'>;

/** Passport's slot on the request, filled by BearerAuthGuard. */
export function principalOf(request: { user?: unknown }): Principal | undefined {
  return request.user as Principal | undefined;
}

/** `@Principal()` behind BearerAuthGuard; without it a programming error (500), never anonymous. */
export const Principal = createParamDecorator((_data: unknown, context: ExecutionContext): Principal => {
  const principal = principalOf(context.switchToHttp().getRequest<{ user?: unknown }>());
  if (!principal) throw new Error('@Principal() is used on a route without BearerAuthGuard');
  return principal;
});

import {
  applyDecorators,
  Header,
  Inject,
  Injectable,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { ApiProblem, APP_CONFIG, constantTimeEqual } from '@svc/platform';
import type { CrewApiConfig } from '../config';

/** Whether `authorization` is `Bearer <expected token>`, compared in constant time. */
export function isInternalToken(authorization: string | undefined, expected: string): boolean {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
  return constantTimeEqual(expected, match ? match[1] : '') && match !== null;
}

/** The internal records API wants `Bearer <INTERNAL_API_TOKEN>`, else 401 `invalid_token` (RFC 6750 §3.1). */
@Injectable()
export class InternalTokenGuard implements CanActivate {
  constructor(@Inject(APP_CONFIG) private readonly config: Pick<CrewApiConfig, 'INTERNAL_API_TOKEN'>) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: { authorization?: string } }>();
    if (isInternalToken(request.headers.authorization, this.config.INTERNAL_API_TOKEN)) return true;
    const sent = request.headers.authorization !== undefined;
    throw new ApiProblem(
      'invalid_token',
      sent
        ? 'The internal API token is not valid.'
        : 'The internal records API needs `Authorization: Bearer <INTERNAL_API_TOKEN>`.',
      { headers: { 'www-authenticate': sent ? 'Bearer error="invalid_token"' : 'Bearer' } },
    );
  }
}

/** On a handler of the internal records API: internal token required, answers never cached. */
export const InternalApi = () =>
  applyDecorators(UseGuards(InternalTokenGuard), Header('cache-control', 'no-store'));

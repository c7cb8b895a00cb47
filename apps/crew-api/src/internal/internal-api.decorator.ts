import { applyDecorators, Header, UseGuards } from '@nestjs/common';
import { InternalTokenGuard } from './internal-token.guard';

/** On a handler of the internal records API: internal token required, answers never cached. */
export const InternalApi = () =>
  applyDecorators(UseGuards(InternalTokenGuard), Header('cache-control', 'no-store'));

import { Injectable } from '@nestjs/common';
import type { IntrospectResponse } from '@svc/contracts';
import type { Introspector } from '@svc/security';
import { TokensService } from './tokens.service';

/** auth-server's own bearer endpoints (userinfo) read the token store directly, not over RPC. */
@Injectable()
export class LocalIntrospector implements Introspector {
  constructor(private readonly tokens: TokensService) {}

  introspect(digest: string): Promise<IntrospectResponse> {
    return this.tokens.introspect(digest);
  }
}

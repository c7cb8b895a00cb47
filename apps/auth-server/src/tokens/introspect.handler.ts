import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { answerRpc } from '@svc/platform';
import { AUTH_INTROSPECT, type IntrospectResponse } from '@svc/contracts';
import { TokensService } from './tokens.service';

/** Resource apps ask this on an introspection-cache miss. */
@Controller()
export class IntrospectHandler {
  constructor(private readonly tokens: TokensService) {}

  @MessagePattern(AUTH_INTROSPECT.pattern)
  introspect(@Payload() payload: unknown): Promise<IntrospectResponse> {
    return answerRpc(() => this.tokens.introspect(AUTH_INTROSPECT.parseRequest(payload).token_digest));
  }
}

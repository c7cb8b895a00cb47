import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { answerRpc } from '@svc/platform';
import { AUTH_CONSENTS_REVOKE, AUTH_INTROSPECT, type IntrospectResponse } from '@svc/contracts';
import { TokensService } from './tokens.service';

@Controller()
export class TokensHandler {
  constructor(private readonly tokens: TokensService) {}

  /** Resource apps ask this on an introspection-cache miss. */
  @MessagePattern(AUTH_INTROSPECT.pattern)
  introspect(@Payload() payload: unknown): Promise<IntrospectResponse> {
    return answerRpc(() => this.tokens.introspect(AUTH_INTROSPECT.parseRequest(payload).token_digest));
  }

  /** consent-ui's Disconnect: the consent ends with every token it gave. */
  @MessagePattern(AUTH_CONSENTS_REVOKE.pattern)
  disconnect(@Payload() payload: unknown): Promise<{ revoked: boolean }> {
    return answerRpc(async () => {
      const request = AUTH_CONSENTS_REVOKE.parseRequest(payload);
      return { revoked: await this.tokens.disconnect(request.user_id, request.client_id) };
    });
  }
}

import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { answerRpc } from '@svc/platform';
import { AUTH_CONSENTS_LIST, AUTH_CONSENTS_REVOKE, type Connection } from '@svc/contracts';
import { ConsentsService } from './consents.service';

/** The connected-partners page of consent-ui. */
@Controller()
export class ConsentsHandler {
  constructor(private readonly consents: ConsentsService) {}

  @MessagePattern(AUTH_CONSENTS_LIST.pattern)
  list(@Payload() payload: unknown): Promise<{ connections: Connection[] }> {
    return answerRpc(async () => ({
      connections: await this.consents.list(AUTH_CONSENTS_LIST.parseRequest(payload).user_id),
    }));
  }

  @MessagePattern(AUTH_CONSENTS_REVOKE.pattern)
  revoke(@Payload() payload: unknown): Promise<{ revoked: boolean }> {
    return answerRpc(async () => {
      const request = AUTH_CONSENTS_REVOKE.parseRequest(payload);
      return { revoked: await this.consents.disconnect(request.user_id, request.client_id) };
    });
  }
}

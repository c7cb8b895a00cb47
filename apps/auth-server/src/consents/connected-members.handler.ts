import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { AUTH_CONSENTS_CONNECTED, type ConnectedMembersResponse } from '@svc/contracts';
import { answerRpc } from '@svc/platform';
import { ConsentsService } from './consents.service';

/**
 * sponsorship-api asks, before it shows a partner a member's name, which of the seats' members
 * are connected to that partner now (one question per page of seats).
 */
@Controller()
export class ConnectedMembersHandler {
  constructor(private readonly consents: ConsentsService) {}

  @MessagePattern(AUTH_CONSENTS_CONNECTED.pattern)
  connected(@Payload() payload: unknown): Promise<ConnectedMembersResponse> {
    return answerRpc(async () => {
      const request = AUTH_CONSENTS_CONNECTED.parseRequest(payload);
      return { user_ids: await this.consents.connectedAmong(request.client_id, request.user_ids) };
    });
  }
}

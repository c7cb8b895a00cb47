import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { answerRpc } from '@svc/platform';
import {
  AUTH_CONSENTS_CONNECTED,
  AUTH_CONSENTS_LIST,
  type ConnectedMembersResponse,
  type Connection,
} from '@svc/contracts';
import { ConsentsService } from './consents.service';

/** consent-ui's connected-partners page, and sponsorship-api's question before it names members. */
@Controller()
export class ConsentsHandler {
  constructor(private readonly consents: ConsentsService) {}

  @MessagePattern(AUTH_CONSENTS_LIST.pattern)
  list(@Payload() payload: unknown): Promise<{ connections: Connection[] }> {
    return answerRpc(async () => ({
      connections: await this.consents.list(AUTH_CONSENTS_LIST.parseRequest(payload).user_id),
    }));
  }

  /** Which of the seats' members are connected to the partner now (one question per page of seats). */
  @MessagePattern(AUTH_CONSENTS_CONNECTED.pattern)
  connected(@Payload() payload: unknown): Promise<ConnectedMembersResponse> {
    return answerRpc(async () => {
      const request = AUTH_CONSENTS_CONNECTED.parseRequest(payload);
      return { user_ids: await this.consents.connectedAmong(request.client_id, request.user_ids) };
    });
  }
}

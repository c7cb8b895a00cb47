import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { AUTH_WEBHOOK_SIGNING_KEYS, type WebhookSigningKeysResponse } from '@svc/contracts';
import { answerRpc } from '@svc/platform';
import { PartnersService } from './partners.service';

/** The dispatcher asks for a partner's public signing keys (its API and portal), or rotates them. */
@Controller()
export class WebhookSigningKeysHandler {
  constructor(private readonly partners: PartnersService) {}

  @MessagePattern(AUTH_WEBHOOK_SIGNING_KEYS.pattern)
  signingKeys(@Payload() payload: unknown): Promise<WebhookSigningKeysResponse> {
    return answerRpc(() => {
      const request = AUTH_WEBHOOK_SIGNING_KEYS.parseRequest(payload);
      return request.rotate
        ? this.partners.rotateSigningKey(request.client_id)
        : this.partners.signingKeys(request.client_id);
    });
  }
}

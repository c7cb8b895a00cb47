import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { answerRpc } from '@svc/platform';
import { AUTH_WEBHOOK_RECIPIENTS, type WebhookRecipientsResponse } from '@svc/contracts';
import { WebhookRecipientsService } from './webhook-recipients.service';

/** webhook-dispatcher asks this for every event it fans out. */
@Controller()
export class WebhookRecipientsHandler {
  constructor(private readonly recipients: WebhookRecipientsService) {}

  @MessagePattern(AUTH_WEBHOOK_RECIPIENTS.pattern)
  recipientsFor(@Payload() payload: unknown): Promise<WebhookRecipientsResponse> {
    return answerRpc(() => this.recipients.find(AUTH_WEBHOOK_RECIPIENTS.parseRequest(payload)));
  }
}

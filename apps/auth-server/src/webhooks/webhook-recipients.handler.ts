import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { answerRpc } from '@svc/platform';
import {
  AUTH_WEBHOOK_RECIPIENTS,
  AUTH_WEBHOOK_RECIPIENTS_BATCH,
  type WebhookRecipientsBatchResponse,
  type WebhookRecipientsResponse,
} from '@svc/contracts';
import { WebhookRecipientsService } from './webhook-recipients.service';

/** webhook-dispatcher asks the batch for the events it fans out; crew-api the single one for a test event. */
@Controller()
export class WebhookRecipientsHandler {
  constructor(private readonly recipients: WebhookRecipientsService) {}

  @MessagePattern(AUTH_WEBHOOK_RECIPIENTS.pattern)
  recipientsFor(@Payload() payload: unknown): Promise<WebhookRecipientsResponse> {
    return answerRpc(() => this.recipients.find(AUTH_WEBHOOK_RECIPIENTS.parseRequest(payload)));
  }

  @MessagePattern(AUTH_WEBHOOK_RECIPIENTS_BATCH.pattern)
  recipientsForMany(@Payload() payload: unknown): Promise<WebhookRecipientsBatchResponse> {
    return answerRpc(() =>
      this.recipients.findMany(AUTH_WEBHOOK_RECIPIENTS_BATCH.parseRequest(payload).questions),
    );
  }
}

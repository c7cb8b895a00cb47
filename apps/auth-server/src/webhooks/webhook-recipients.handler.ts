import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { answerRpc } from '@svc/platform';
import {
  AUTH_WEBHOOK_RECIPIENTS_BATCH,
  AUTH_WEBHOOK_TARGET,
  type WebhookRecipientsBatchResponse,
  type WebhookTargetResponse,
} from '@svc/contracts';
import { WebhookRecipientsService } from './webhook-recipients.service';

/**
 * webhook-dispatcher asks the batch (with the signing secrets) for the events it fans out;
 * crew-api asks only where a test event would go, and gets the URL alone. Each contract's
 * `callers` keeps the other apps out (the RPC server checks them before a handler runs).
 */
@Controller()
export class WebhookRecipientsHandler {
  constructor(private readonly recipients: WebhookRecipientsService) {}

  @MessagePattern(AUTH_WEBHOOK_TARGET.pattern)
  target(@Payload() payload: unknown): Promise<WebhookTargetResponse> {
    return answerRpc(() => this.recipients.target(AUTH_WEBHOOK_TARGET.parseRequest(payload)));
  }

  @MessagePattern(AUTH_WEBHOOK_RECIPIENTS_BATCH.pattern)
  recipientsForMany(@Payload() payload: unknown): Promise<WebhookRecipientsBatchResponse> {
    return answerRpc(() =>
      this.recipients.findMany(AUTH_WEBHOOK_RECIPIENTS_BATCH.parseRequest(payload).questions),
    );
  }
}

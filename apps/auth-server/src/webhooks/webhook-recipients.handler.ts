import { Controller, Inject } from '@nestjs/common';
import { Ctx, MessagePattern, Payload, RmqContext } from '@nestjs/microservices';
import { APP_CONFIG, type ConfigOf } from '@svc/platform';
import {
  AUTH_WEBHOOK_RECIPIENTS_BATCH,
  AUTH_WEBHOOK_TARGET,
  type WebhookRecipientsBatchResponse,
  type WebhookTargetResponse,
} from '@svc/contracts';
import type { AUTH_SERVER_CONFIG } from '../config';
import { answerAuthRpc } from '../rpc-errors';
import { WebhookRecipientsService } from './webhook-recipients.service';
import { WebhooksException } from './webhooks.exception';

/**
 * webhook-dispatcher asks the batch (with the signing secrets) for the events it fans out;
 * crew-api asks only where a test event would go, and gets the URL alone.
 */
@Controller()
export class WebhookRecipientsHandler {
  constructor(
    private readonly recipients: WebhookRecipientsService,
    @Inject(APP_CONFIG) private readonly config: ConfigOf<typeof AUTH_SERVER_CONFIG>,
  ) {}

  @MessagePattern(AUTH_WEBHOOK_TARGET.pattern)
  target(@Payload() payload: unknown): Promise<WebhookTargetResponse> {
    return answerAuthRpc(() => this.recipients.target(AUTH_WEBHOOK_TARGET.parseRequest(payload)));
  }

  @MessagePattern(AUTH_WEBHOOK_RECIPIENTS_BATCH.pattern)
  recipientsForMany(
    @Payload() payload: unknown,
    @Ctx() context: RmqContext,
  ): Promise<WebhookRecipientsBatchResponse> {
    // The broker checks `user_id` against the connection's login, so only the dispatcher's own
    // user can carry its name: any other caller (or one that names nobody) gets no secret.
    const caller = (context.getMessage() as { properties?: { userId?: unknown } }).properties?.userId;
    return answerAuthRpc(async () => {
      if (caller !== this.config.WEBHOOK_DISPATCHER_AMQP_USER) {
        const message = `${AUTH_WEBHOOK_RECIPIENTS_BATCH.pattern} answers the webhook dispatcher only`;
        throw new WebhooksException('dispatcher_only', message);
      }
      return this.recipients.findMany(AUTH_WEBHOOK_RECIPIENTS_BATCH.parseRequest(payload).questions);
    });
  }
}

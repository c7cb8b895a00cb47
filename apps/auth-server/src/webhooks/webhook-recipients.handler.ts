import { Controller, Inject } from '@nestjs/common';
import { Ctx, MessagePattern, Payload, RmqContext, RpcException } from '@nestjs/microservices';
import { answerRpc, APP_CONFIG, type ConfigOf } from '@svc/platform';
import {
  AUTH_WEBHOOK_RECIPIENTS_BATCH,
  AUTH_WEBHOOK_TARGET,
  type WebhookRecipientsBatchResponse,
  type WebhookTargetResponse,
} from '@svc/contracts';
import type { AUTH_SERVER_CONFIG } from '../config';
import { WebhookRecipientsService } from './webhook-recipients.service';

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
    return answerRpc(() => this.recipients.target(AUTH_WEBHOOK_TARGET.parseRequest(payload)));
  }

  @MessagePattern(AUTH_WEBHOOK_RECIPIENTS_BATCH.pattern)
  recipientsForMany(
    @Payload() payload: unknown,
    @Ctx() context: RmqContext,
  ): Promise<WebhookRecipientsBatchResponse> {
    // The broker checks `user_id` against the connection's login, so only the dispatcher's own
    // user can carry its name: any other caller (or one that names nobody) gets no secret.
    const caller = (context.getMessage() as { properties?: { userId?: unknown } }).properties?.userId;
    if (caller !== this.config.WEBHOOK_DISPATCHER_AMQP_USER) {
      return Promise.reject(
        new RpcException({
          error: 'access_denied',
          message: `${AUTH_WEBHOOK_RECIPIENTS_BATCH.pattern} answers the webhook dispatcher only`,
        }),
      );
    }
    return answerRpc(() =>
      this.recipients.findMany(AUTH_WEBHOOK_RECIPIENTS_BATCH.parseRequest(payload).questions),
    );
  }
}

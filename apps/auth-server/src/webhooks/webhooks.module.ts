import { Module } from '@nestjs/common';
import { CryptoModule } from '../crypto/crypto.module';
import { WebhookRecipientsHandler } from './webhook-recipients.handler';
import { WebhookRecipientsRepository } from './webhook-recipients.repository';
import { WebhookRecipientsService } from './webhook-recipients.service';

@Module({
  imports: [CryptoModule],
  controllers: [WebhookRecipientsHandler],
  providers: [WebhookRecipientsRepository, WebhookRecipientsService],
})
export class WebhooksModule {}

import { Module } from '@nestjs/common';
import { OutboxRepository } from '@svc/platform';
import { WebhookTestController } from './webhook-test.controller';
import { WebhookTestService } from './webhook-test.service';

@Module({ controllers: [WebhookTestController], providers: [WebhookTestService, OutboxRepository] })
export class WebhooksModule {}

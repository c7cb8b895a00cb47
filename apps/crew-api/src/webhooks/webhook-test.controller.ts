import { Controller, Get, Header } from '@nestjs/common';
import { BearerAuth, Principal } from '@svc/security';
import type { WebhookTestResponse } from '@svc/contracts';
import { WebhookTestService } from './webhook-test.service';

@Controller('v1/webhooks')
export class WebhookTestController {
  constructor(private readonly webhooks: WebhookTestService) {}

  /** Any live access token (docs/rules.md); rate-limited like every /v1/* endpoint. */
  @Get('test')
  @BearerAuth()
  @Header('cache-control', 'no-store')
  send(@Principal() principal: Principal): Promise<WebhookTestResponse> {
    return this.webhooks.send(principal);
  }
}

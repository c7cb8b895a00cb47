import type {
  EndpointEnableResponse,
  PartnerDeliveryDetailResponse,
  PartnerDeliveryPageResponse,
  RedeliveryResponse,
  ReplayResponse,
  WebhookEndpointResponse,
} from '@svc/contracts';
import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ActivePartnerAuth, Partner, type PartnerPrincipal } from '@svc/security';
import { isDeliveryId, parseDeliveryListQuery, parseReplay } from './dto/delivery-requests.dto';
import { PartnerWebhooksException } from './partner-webhooks.exception';
import { PartnerWebhooksService } from './partner-webhooks.service';

/** A partner's own webhooks: delivery log, redelivery, replay, endpoint health and enabling. */
@Controller('v1/partners/webhooks')
@ActivePartnerAuth()
export class PartnerWebhooksController {
  constructor(private readonly webhooks: PartnerWebhooksService) {}

  @Get('endpoint')
  endpoint(@Partner() partner: PartnerPrincipal): Promise<WebhookEndpointResponse> {
    return this.webhooks.endpoint(partner);
  }

  /** 200 whether or not the test was acknowledged: the body says what it got and the state after. */
  @Post('endpoint/enable')
  @HttpCode(200)
  enable(@Partner() partner: PartnerPrincipal): Promise<EndpointEnableResponse> {
    return this.webhooks.enable(partner);
  }

  @Get('deliveries')
  list(@Partner() partner: PartnerPrincipal, @Query() query: unknown): Promise<PartnerDeliveryPageResponse> {
    return this.webhooks.list(partner, parseDeliveryListQuery(query));
  }

  @Get('deliveries/:deliveryId')
  get(
    @Partner() partner: PartnerPrincipal,
    @Param('deliveryId') id: string,
  ): Promise<PartnerDeliveryDetailResponse> {
    return this.webhooks.get(partner, deliveryIdOf(id));
  }

  @Post('deliveries/:deliveryId/redeliver')
  @HttpCode(202)
  redeliver(
    @Partner() partner: PartnerPrincipal,
    @Param('deliveryId') id: string,
  ): Promise<RedeliveryResponse> {
    return this.webhooks.redeliver(partner, deliveryIdOf(id));
  }

  @Post('replay')
  @HttpCode(202)
  replay(@Partner() partner: PartnerPrincipal, @Body() body: unknown): Promise<ReplayResponse> {
    return this.webhooks.replay(partner, parseReplay(body));
  }
}

/** Anything that cannot be a delivery id is simply not found (never a 422 that tells ids apart). */
function deliveryIdOf(id: string): string {
  if (!isDeliveryId(id)) {
    throw new PartnerWebhooksException('delivery_not_found', `No delivery ${id.slice(0, 100)} among yours.`);
  }
  return id;
}

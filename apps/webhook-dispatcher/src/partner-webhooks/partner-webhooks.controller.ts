import type {
  EndpointEnableResponse,
  PartnerDeliveryDetailResponse,
  PartnerDeliveryPageResponse,
  RedeliveryResponse,
  ReplayResponse,
  WebhookEndpointResponse,
  WebhookSigningKeysResponse,
} from '@svc/contracts';
import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { isNotModified, strongEtag } from '@svc/platform';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ActivePartnerAuth, Partner, type PartnerPrincipal } from '@svc/security';
import { parseDeliveryListQuery, parseReplay } from './dto/delivery-requests.dto';
import { PartnerWebhooksService } from './partner-webhooks.service';

/**
 * A partner's own webhooks: delivery log, redelivery, replay, endpoint health and enabling, and the
 * public keys its deliveries are signed with.
 */
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

  /**
   * Conditional GET (RFC 9110 §13.1.2) on the ETag alone: the list changes when a key expires,
   * which no Last-Modified would show. `private, no-cache`: revalidate before every use.
   */
  @Get('signing-keys')
  async signingKeys(
    @Partner() partner: PartnerPrincipal,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<WebhookSigningKeysResponse | undefined> {
    const keys = await this.webhooks.signingKeys(partner);
    const etag = strongEtag('signing-keys.v1', partner.client_id, JSON.stringify(keys));
    reply.header('etag', etag).header('cache-control', 'private, no-cache');
    const validators = { etag, lastModified: new Date() };
    if (!isNotModified({ 'if-none-match': request.headers['if-none-match'] }, validators)) return keys;
    reply.status(304);
    return undefined;
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
    return this.webhooks.get(partner, id);
  }

  @Post('deliveries/:deliveryId/redeliver')
  @HttpCode(202)
  redeliver(
    @Partner() partner: PartnerPrincipal,
    @Param('deliveryId') id: string,
  ): Promise<RedeliveryResponse> {
    return this.webhooks.redeliver(partner, id);
  }

  @Post('replay')
  @HttpCode(202)
  replay(@Partner() partner: PartnerPrincipal, @Body() body: unknown): Promise<ReplayResponse> {
    return this.webhooks.replay(partner, parseReplay(body));
  }
}

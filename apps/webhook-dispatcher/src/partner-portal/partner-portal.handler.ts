import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  WEBHOOKS_PORTAL_ACTION,
  WEBHOOKS_PORTAL_DELIVERIES,
  WEBHOOKS_PORTAL_DELIVERY,
  WEBHOOKS_PORTAL_OVERVIEW,
} from '@svc/contracts';
import { answerRpc } from '@svc/platform';
import { PartnerPortalService } from './partner-portal.service';

/** consent-ui's partner portal asks about the portal session's partner (`webhooks.rpc`). */
@Controller()
export class PartnerPortalHandler {
  constructor(private readonly portal: PartnerPortalService) {}

  @MessagePattern(WEBHOOKS_PORTAL_OVERVIEW.pattern)
  overview(@Payload() payload: unknown) {
    return answerRpc(() => this.portal.overview(WEBHOOKS_PORTAL_OVERVIEW.parseRequest(payload).client_id));
  }

  @MessagePattern(WEBHOOKS_PORTAL_DELIVERIES.pattern)
  deliveries(@Payload() payload: unknown) {
    return answerRpc(() => {
      const request = WEBHOOKS_PORTAL_DELIVERIES.parseRequest(payload);
      return this.portal.deliveries(request.client_id, request.query);
    });
  }

  @MessagePattern(WEBHOOKS_PORTAL_DELIVERY.pattern)
  delivery(@Payload() payload: unknown) {
    return answerRpc(() => {
      const request = WEBHOOKS_PORTAL_DELIVERY.parseRequest(payload);
      return this.portal.delivery(request.client_id, request.delivery_id);
    });
  }

  @MessagePattern(WEBHOOKS_PORTAL_ACTION.pattern)
  act(@Payload() payload: unknown) {
    return answerRpc(() => this.portal.act(WEBHOOKS_PORTAL_ACTION.parseRequest(payload)));
  }
}

import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { answerRpc } from '@svc/platform';
import {
  AUTH_PORTAL_LINK_PEEK,
  AUTH_PORTAL_LINK_REDEEM,
  AUTH_PORTAL_STANDING,
  type PortalLinkRedeemResponse,
} from '@svc/contracts';
import { PortalLinksService } from './portal-links.service';

/**
 * consent-ui shows a portal link's page (peek), opens the link from that page's form (redeem),
 * and checks the partner's standing on every portal page.
 */
@Controller()
export class PortalLinksHandler {
  constructor(private readonly links: PortalLinksService) {}

  @MessagePattern(AUTH_PORTAL_LINK_REDEEM.pattern)
  redeem(@Payload() payload: unknown): Promise<PortalLinkRedeemResponse> {
    return answerRpc(() => this.links.redeem(AUTH_PORTAL_LINK_REDEEM.parseRequest(payload).token_digest));
  }

  @MessagePattern(AUTH_PORTAL_LINK_PEEK.pattern)
  peek(@Payload() payload: unknown): Promise<PortalLinkRedeemResponse> {
    return answerRpc(() => this.links.peek(AUTH_PORTAL_LINK_PEEK.parseRequest(payload).token_digest));
  }

  @MessagePattern(AUTH_PORTAL_STANDING.pattern)
  standing(@Payload() payload: unknown): Promise<{ active: boolean }> {
    return answerRpc(() => this.links.standing(AUTH_PORTAL_STANDING.parseRequest(payload).client_id));
  }
}

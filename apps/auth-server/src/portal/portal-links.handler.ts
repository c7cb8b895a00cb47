import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { AUTH_PORTAL_LINK_REDEEM, type PortalLinkRedeemResponse } from '@svc/contracts';
import { answerAuthRpc } from '../rpc-errors';
import { PortalLinksService } from './portal-links.service';

/** consent-ui opens a portal link. */
@Controller()
export class PortalLinksHandler {
  constructor(private readonly links: PortalLinksService) {}

  @MessagePattern(AUTH_PORTAL_LINK_REDEEM.pattern)
  redeem(@Payload() payload: unknown): Promise<PortalLinkRedeemResponse> {
    return answerAuthRpc(() => this.links.redeem(AUTH_PORTAL_LINK_REDEEM.parseRequest(payload).token_digest));
  }
}

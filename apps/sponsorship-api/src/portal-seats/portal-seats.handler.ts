import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { SPONSORSHIP_PORTAL_SEATS, type PortalAnswer, type PortalSeatsResult } from '@svc/contracts';
import { answerRpc } from '@svc/platform';
import { PortalSeatsService } from './portal-seats.service';

/** consent-ui's partner portal asks for the portal session's partner's seats. */
@Controller()
export class PortalSeatsHandler {
  constructor(private readonly seats: PortalSeatsService) {}

  @MessagePattern(SPONSORSHIP_PORTAL_SEATS.pattern)
  page(@Payload() payload: unknown): Promise<PortalAnswer<PortalSeatsResult>> {
    return answerRpc(() => {
      const request = SPONSORSHIP_PORTAL_SEATS.parseRequest(payload);
      return this.seats.page(request.client_id, request.query);
    });
  }
}

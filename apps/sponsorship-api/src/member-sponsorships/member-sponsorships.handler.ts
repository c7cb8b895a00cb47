import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { SPONSORSHIP_MEMBER_SPONSORSHIPS, type MemberSponsorshipsResponse } from '@svc/contracts';
import { answerRpc } from '@svc/platform';
import { MemberSponsorshipsService } from './member-sponsorships.service';

/** consent-ui's account page asks for the signed-in member's sponsorships. */
@Controller()
export class MemberSponsorshipsHandler {
  constructor(private readonly sponsorships: MemberSponsorshipsService) {}

  @MessagePattern(SPONSORSHIP_MEMBER_SPONSORSHIPS.pattern)
  list(@Payload() payload: unknown): Promise<MemberSponsorshipsResponse> {
    return answerRpc(async () => ({
      sponsorships: await this.sponsorships.of(SPONSORSHIP_MEMBER_SPONSORSHIPS.parseRequest(payload).user_id),
    }));
  }
}

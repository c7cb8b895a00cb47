import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { answerRpc } from '@svc/platform';
import { AUTH_PARTNER_VERIFY, type PartnerVerifyResponse } from '@svc/contracts';
import { PartnersService } from './partners.service';

/** The Basic guard of the partner endpoints (sponsorship-api) asks this. */
@Controller()
export class PartnerCredentialsHandler {
  constructor(private readonly partners: PartnersService) {}

  @MessagePattern(AUTH_PARTNER_VERIFY.pattern)
  verify(@Payload() payload: unknown): Promise<PartnerVerifyResponse> {
    return answerRpc(() => this.partners.verifyDigest(AUTH_PARTNER_VERIFY.parseRequest(payload)));
  }
}

import type { MemberLeftResponse } from '@svc/contracts';
import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { Partner, PartnerAuth, type PartnerPrincipal } from '@svc/security';
import { parseMemberLeft } from './dto/member-left.dto';
import { MembersLeftService } from './members-left.service';

@Controller('v1/partners/members')
export class MembersLeftController {
  constructor(private readonly membersLeft: MembersLeftService) {}

  /** 200 whether or not a seat was closed now (idempotent). Only the flagged partner may call it. */
  @Post('left')
  @HttpCode(200)
  @PartnerAuth({ memberLeft: true })
  left(@Partner() partner: PartnerPrincipal, @Body() body: unknown): Promise<MemberLeftResponse> {
    return this.membersLeft.memberLeft(partner, parseMemberLeft(body));
  }
}

import { AccessReadsRecorder, answerConditionally, type JsonBody } from '@svc/platform';
import type { ProfileResponse } from '@svc/contracts';
import { Controller, Get, Req, Res } from '@nestjs/common';
import { BearerAuth, Principal } from '@svc/security';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { MembersService } from './members.service';

/** The scope `/v1/me` requires, and the one its reads count under in the member's access history. */
const SCOPE = 'profile:read';

@Controller('v1/me')
export class MeController {
  constructor(
    private readonly members: MembersService,
    private readonly reads: AccessReadsRecorder,
  ) {}

  /** The caller's profile and membership (docs/rules.md, Profile). */
  @Get()
  @BearerAuth(SCOPE)
  async me(
    @Principal() principal: Principal,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<JsonBody<ProfileResponse> | undefined> {
    const answer = answerConditionally(request, reply, await this.members.profile(principal));
    this.reads.count(principal, SCOPE);
    return answer;
  }
}

import type { ProfileResponse } from '@svc/contracts';
import { Controller, Get, UseInterceptors, Req, Res } from '@nestjs/common';
import { BearerAuth, CountMemberReads, Principal } from '@svc/security';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { answerConditionally, type JsonBody } from '../http/conditional';
import { MembersService } from './members.service';

@Controller('v1/me')
@UseInterceptors(CountMemberReads)
export class MeController {
  constructor(private readonly members: MembersService) {}

  /** The caller's profile and membership (docs/rules.md, Profile). */
  @Get()
  @BearerAuth('profile:read')
  async me(
    @Principal() principal: Principal,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<JsonBody<ProfileResponse> | undefined> {
    return answerConditionally(request, reply, await this.members.profile(principal));
  }
}

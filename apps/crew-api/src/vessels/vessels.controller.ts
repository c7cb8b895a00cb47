import type { VesselPageResponse } from '@svc/contracts';
import { Controller, Get, UseInterceptors, Query, Req, Res } from '@nestjs/common';
import { BearerAuth, CountMemberReads, Principal } from '@svc/security';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { answerConditionally, type JsonBody } from '../http/conditional';
import { parseVesselsQuery } from './dto/vessels-query.dto';
import { VesselsService } from './vessels.service';

@Controller('v1/me/vessels')
@UseInterceptors(CountMemberReads)
export class VesselsController {
  constructor(private readonly vessels: VesselsService) {}

  /** The vessel history, keyset-paginated (docs/rules.md, Vessel history). */
  @Get()
  @BearerAuth('vessels:read')
  async page(
    @Principal() principal: Principal,
    @Query() query: unknown,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<JsonBody<VesselPageResponse> | undefined> {
    return answerConditionally(request, reply, await this.vessels.page(principal, parseVesselsQuery(query)));
  }
}

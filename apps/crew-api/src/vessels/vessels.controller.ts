import { AccessReadsRecorder, answerConditionally, type JsonBody } from '@svc/platform';
import type { VesselPageResponse } from '@svc/contracts';
import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import { BearerAuth, Principal } from '@svc/security';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { parseVesselsQuery } from './dto/vessels-query.dto';
import { VesselsService } from './vessels.service';

/** The scope the vessel history requires, and the one its reads count under in the access history. */
const SCOPE = 'vessels:read';

@Controller('v1/me/vessels')
export class VesselsController {
  constructor(
    private readonly vessels: VesselsService,
    private readonly reads: AccessReadsRecorder,
  ) {}

  /** The vessel history, keyset-paginated (docs/rules.md, Vessel history). */
  @Get()
  @BearerAuth(SCOPE)
  async page(
    @Principal() principal: Principal,
    @Query() query: unknown,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<JsonBody<VesselPageResponse> | undefined> {
    const page = await this.vessels.page(principal, parseVesselsQuery(query));
    const answer = answerConditionally(request, reply, page);
    this.reads.count(principal, SCOPE);
    return answer;
  }
}

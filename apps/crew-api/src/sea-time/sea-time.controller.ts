import type { RecentTrendResponse, SeaTimeResponse } from '@svc/contracts';
import { Controller, Get, UseInterceptors, Req, Res } from '@nestjs/common';
import { BearerAuth, CountMemberReads, Principal } from '@svc/security';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { answerConditionally, type JsonBody } from '../http/conditional';
import { SeaTimeService } from './sea-time.service';

@Controller('v1/me/sea-time')
@UseInterceptors(CountMemberReads)
export class SeaTimeController {
  constructor(private readonly seaTime: SeaTimeService) {}

  /** Totals, verified subset and days by role (docs/rules.md, Sea-time totals). */
  @Get()
  @BearerAuth('seatime:read')
  async totals(
    @Principal() principal: Principal,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<JsonBody<SeaTimeResponse> | undefined> {
    return answerConditionally(request, reply, await this.seaTime.totals(principal));
  }

  /** The rolling twelve months (docs/rules.md, Recent trend). */
  @Get('recent')
  @BearerAuth('seatime:read')
  async recent(
    @Principal() principal: Principal,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<JsonBody<RecentTrendResponse> | undefined> {
    return answerConditionally(request, reply, await this.seaTime.recent(principal));
  }
}

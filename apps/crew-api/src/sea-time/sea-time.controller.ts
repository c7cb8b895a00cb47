import { AccessReadsRecorder, answerConditionally, type JsonBody } from '@svc/platform';
import type { RecentTrendResponse, SeaTimeResponse } from '@svc/contracts';
import { Controller, Get, Req, Res } from '@nestjs/common';
import { BearerAuth, Principal } from '@svc/security';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SeaTimeService } from './sea-time.service';

/** The scope both routes require, and the one their reads count under in the access history. */
const SCOPE = 'seatime:read';

@Controller('v1/me/sea-time')
export class SeaTimeController {
  constructor(
    private readonly seaTime: SeaTimeService,
    private readonly reads: AccessReadsRecorder,
  ) {}

  /** Totals, verified subset and days by role (docs/rules.md, Sea-time totals). */
  @Get()
  @BearerAuth(SCOPE)
  async totals(
    @Principal() principal: Principal,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<JsonBody<SeaTimeResponse> | undefined> {
    const answer = answerConditionally(request, reply, await this.seaTime.totals(principal));
    this.reads.count(principal, SCOPE);
    return answer;
  }

  /** The rolling twelve months (docs/rules.md, Recent trend). */
  @Get('recent')
  @BearerAuth(SCOPE)
  async recent(
    @Principal() principal: Principal,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<JsonBody<RecentTrendResponse> | undefined> {
    const answer = answerConditionally(request, reply, await this.seaTime.recent(principal));
    this.reads.count(principal, SCOPE);
    return answer;
  }
}

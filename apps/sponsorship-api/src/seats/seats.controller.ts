import type { ReconcileResponse, SeatPageResponse, SeatResponse } from '@svc/contracts';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { Partner, PartnerAuth, type PartnerPrincipal } from '@svc/security';
import type { FastifyReply } from 'fastify';
import { parseReconcile } from './dto/reconcile.dto';
import { parseProvision, parseSeatListQuery } from './dto/seat-requests.dto';
import { ReconcileService } from './reconcile.service';
import { SeatsService } from './seats.service';

/** The sponsorship API's seats (docs/rules.md, Sponsorship endpoints; docs/rules.md, Sponsorship). */
@Controller('v1/partners/sponsorships')
@PartnerAuth()
export class SeatsController {
  constructor(
    private readonly seats: SeatsService,
    private readonly reconciler: ReconcileService,
  ) {}

  @Get()
  list(@Partner() partner: PartnerPrincipal, @Query() query: unknown): Promise<SeatPageResponse> {
    return this.seats.list(partner, parseSeatListQuery(query));
  }

  /** 201 with a new seat; 200 with the live seat this e-mail already has. */
  @Post()
  async provision(
    @Partner() partner: PartnerPrincipal,
    @Body() body: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SeatResponse> {
    // The budget starts when the request arrived: the partner's authentication may have asked an RPC too.
    const arrivedAt = Date.now() - reply.elapsedTime;
    const result = await this.seats.provision(partner, parseProvision(body, new Date()), arrivedAt);
    reply.status(result.created ? 201 : 200);
    return result.seat;
  }

  @Post('reconcile')
  @HttpCode(200)
  reconcile(@Partner() partner: PartnerPrincipal, @Body() body: unknown): Promise<ReconcileResponse> {
    return this.reconciler.reconcile(partner, parseReconcile(body));
  }

  @Get(':sponsorshipId')
  get(@Partner() partner: PartnerPrincipal, @Param('sponsorshipId') id: string): Promise<SeatResponse> {
    return this.seats.get(partner, id);
  }

  @Delete(':sponsorshipId')
  remove(@Partner() partner: PartnerPrincipal, @Param('sponsorshipId') id: string): Promise<SeatResponse> {
    return this.seats.remove(partner, id);
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { toPortalProblem, type PortalAnswer, type PortalSeatsResult } from '@svc/contracts';
import { APP_CONFIG, ApiProblem } from '@svc/platform';
import type { SponsorshipApiConfig } from '../config';
import { parseSeatListQuery } from '../seats/dto/seat-requests.dto';
import { seatsProblem } from '../seats/seats-problem.mapper';
import { SeatsRepository } from '../seats/seats.repository';
import { SeatsService } from '../seats/seats.service';

/** The portal's seats page: the API's own list (same filters, paging, name rule), counts and quota. */
@Injectable()
export class PortalSeatsService {
  constructor(
    private readonly seats: SeatsService,
    private readonly repository: SeatsRepository,
    @Inject(APP_CONFIG) private readonly config: Pick<SponsorshipApiConfig, 'SEAT_QUOTA'>,
  ) {}

  async page(clientId: string, query: Record<string, string>): Promise<PortalAnswer<PortalSeatsResult>> {
    try {
      const [page, summary] = await Promise.all([
        this.seats.list({ client_id: clientId }, parseSeatListQuery(query)),
        this.repository.summary(clientId),
      ]);
      return {
        ok: true,
        result: {
          page,
          counts: summary.counts,
          live: summary.counts.invited + summary.counts.active,
          cap: summary.quota ?? this.config.SEAT_QUOTA,
        },
      };
    } catch (err) {
      const problem = err instanceof ApiProblem ? err : seatsProblem(err);
      if (!problem) throw err;
      return { ok: false, problem: toPortalProblem(problem) };
    }
  }
}

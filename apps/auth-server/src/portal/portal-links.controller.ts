import type { PortalSessionResponse } from '@svc/contracts';
import { Controller, Header, HttpCode, Post, UseGuards } from '@nestjs/common';
import { BasicAuthGuard, Partner, RateLimitGuard, type PartnerPrincipal } from '@svc/security';
import { ActivePartnerGuard } from './active-partner.guard';
import { PortalLinksService } from './portal-links.service';

@Controller('v1/partners/portal')
export class PortalLinksController {
  constructor(private readonly links: PortalLinksService) {}

  /** A single-use link to the partner's portal: Basic credentials, the rate limits, not suspended. */
  @Post('sessions')
  @HttpCode(201)
  @UseGuards(BasicAuthGuard, RateLimitGuard, ActivePartnerGuard)
  @Header('cache-control', 'no-store')
  create(@Partner() partner: PartnerPrincipal): Promise<PortalSessionResponse> {
    return this.links.create(partner);
  }
}

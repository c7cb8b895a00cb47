import type { PortalSessionResponse } from '@svc/contracts';
import { Controller, Header, HttpCode, Post } from '@nestjs/common';
import { ActivePartnerAuth, Partner, type PartnerPrincipal } from '@svc/security';
import { PortalLinksService } from './portal-links.service';

@Controller('v1/partners/portal')
export class PortalLinksController {
  constructor(private readonly links: PortalLinksService) {}

  /** A single-use link to the partner's portal: Basic credentials, the rate limits, not suspended. */
  @Post('sessions')
  @HttpCode(201)
  @ActivePartnerAuth()
  @Header('cache-control', 'no-store')
  create(@Partner() partner: PartnerPrincipal): Promise<PortalSessionResponse> {
    return this.links.create(partner);
  }
}

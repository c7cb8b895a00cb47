import { Module } from '@nestjs/common';
import { PartnersModule } from '../partners/partners.module';
import { ActivePartnerGuard } from '@svc/security';
import { PortalLinksController } from './portal-links.controller';
import { PortalLinksHandler } from './portal-links.handler';
import { PortalLinksRepository } from './portal-links.repository';
import { PortalLinksService } from './portal-links.service';

/** `POST /v1/partners/portal/sessions` and the link's redemption by consent-ui (`auth.portal.redeem`). */
@Module({
  imports: [PartnersModule],
  controllers: [PortalLinksController, PortalLinksHandler],
  providers: [PortalLinksRepository, PortalLinksService, ActivePartnerGuard],
})
export class PortalModule {}

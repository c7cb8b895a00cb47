import { Module } from '@nestjs/common';
import { SessionsModule } from '../sessions/sessions.module';
import { CLOCK, type Clock } from '../sessions/sessions.service';
import { PortalController } from './portal.controller';
import { PortalSessionsRepository } from './portal-sessions.repository';
import { PortalService } from './portal.service';

/** The partner portal (`/portal/*`): pages for a partner's staff, opened with a single-use link. */
@Module({
  imports: [SessionsModule],
  controllers: [PortalController],
  providers: [
    PortalService,
    PortalSessionsRepository,
    { provide: CLOCK, useValue: (() => new Date()) satisfies Clock },
  ],
})
export class PortalModule {}

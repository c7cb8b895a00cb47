import { Module } from '@nestjs/common';
import { EntitlementsModule } from '../entitlements/entitlements.module';
import { MemberRegisteredHandler } from './member-registered.handler';
import { ReconcileService } from './reconcile.service';
import { SeatExpiryJob } from './seat-expiry.job';
import { SeatsController } from './seats.controller';
import { SeatsRepository } from './seats.repository';
import { SeatsService } from './seats.service';

@Module({
  imports: [EntitlementsModule],
  controllers: [SeatsController],
  providers: [SeatsRepository, SeatsService, ReconcileService, SeatExpiryJob, MemberRegisteredHandler],
  exports: [SeatsRepository, SeatExpiryJob],
})
export class SeatsModule {}

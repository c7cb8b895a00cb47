import { Module } from '@nestjs/common';
import { EntitlementsModule } from '../entitlements/entitlements.module';
import { MemberConsentsModule } from '../member-consents/member-consents.module';
import { MemberRegisteredHandler } from './member-registered.handler';
import { ProbeBudgetRepository } from './probe-budget.repository';
import { ProbeBudgetService } from './probe-budget.service';
import { ReconcileService } from './reconcile.service';
import { SeatExpiryJob } from './seat-expiry.job';
import { SeatsController } from './seats.controller';
import { SeatTransitionMetrics } from './seat-transition-metrics';
import { SeatsRepository } from './seats.repository';
import { SeatsService } from './seats.service';

@Module({
  imports: [EntitlementsModule, MemberConsentsModule],
  controllers: [SeatsController],
  providers: [
    SeatsRepository,
    SeatTransitionMetrics,
    SeatsService,
    ReconcileService,
    SeatExpiryJob,
    MemberRegisteredHandler,
    ProbeBudgetRepository,
    ProbeBudgetService,
  ],
  exports: [SeatsRepository, SeatsService, SeatExpiryJob],
})
export class SeatsModule {}

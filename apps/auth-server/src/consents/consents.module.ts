import { Module } from '@nestjs/common';
import { OutboxRepository } from '@svc/platform';
import { ConsentsHandler } from './consents.handler';
import { ConsentsRepository } from './consents.repository';
import { ConsentsService } from './consents.service';

/** The CLI has no OutboxModule (its relay runs in the serving app only), hence the repository here. */
@Module({
  controllers: [ConsentsHandler],
  providers: [ConsentsRepository, ConsentsService, OutboxRepository],
  exports: [ConsentsService, ConsentsRepository],
})
export class ConsentsModule {}

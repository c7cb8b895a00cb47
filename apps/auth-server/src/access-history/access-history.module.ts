import { AccessReadsRecorder } from '@svc/platform';
import { Module } from '@nestjs/common';
import { AccessHistoryHandler } from './access-history.handler';
import { AccessHistoryService } from './access-history.service';
import { LocalAccessReadsRecorder } from './access-reads.recorder';
import { AccessReadsRepository } from './access-reads.repository';

/** The crew member's access history: auth-server owns the table (docs/access-history.md). */
@Module({
  controllers: [AccessHistoryHandler],
  providers: [
    AccessReadsRepository,
    AccessHistoryService,
    { provide: AccessReadsRecorder, useClass: LocalAccessReadsRecorder },
  ],
  exports: [AccessReadsRecorder, AccessReadsRepository],
})
export class AccessHistoryModule {}

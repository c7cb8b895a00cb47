import { Global, Module } from '@nestjs/common';
import { AccessReadsRecorder, CountMemberReads } from '@svc/security';
import { RpcAccessReadsRecorder } from './rpc-access-reads.recorder';

/**
 * Counting the reads of `/v1/me*` for the member's access history: the features' controllers
 * declare `@UseInterceptors(CountMemberReads)`, which counts under the scope `@BearerAuth` requires.
 */
@Global()
@Module({
  providers: [{ provide: AccessReadsRecorder, useClass: RpcAccessReadsRecorder }, CountMemberReads],
  exports: [AccessReadsRecorder, CountMemberReads],
})
export class AccessHistoryModule {}

import { Global, Module } from '@nestjs/common';
import { AccessReadsRecorder } from '@svc/security';
import { RpcAccessReadsRecorder } from './rpc-access-reads.recorder';

/**
 * Counting the reads of `/v1/me*` for the member's access history: each crew-data controller
 * counts an answered read under the scope its route requires, one call on this replica's tally
 * (no Nest interceptor: that would wrap every answer in an Observable for a Map update).
 */
@Global()
@Module({
  providers: [{ provide: AccessReadsRecorder, useClass: RpcAccessReadsRecorder }],
  exports: [AccessReadsRecorder],
})
export class AccessHistoryModule {}

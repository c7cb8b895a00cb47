import { AccessReadsRecorder } from '@svc/platform';
import { Global, Module } from '@nestjs/common';
import { RpcAccessReadsRecorder } from './rpc-access-reads.recorder';

/** Each crew-data controller counts its answered reads itself (an interceptor would wrap every answer in an Observable). */
@Global()
@Module({
  providers: [{ provide: AccessReadsRecorder, useClass: RpcAccessReadsRecorder }],
  exports: [AccessReadsRecorder],
})
export class AccessHistoryModule {}

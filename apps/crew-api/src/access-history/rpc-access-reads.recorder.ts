import { Inject, Injectable } from '@nestjs/common';
import { AUTH_ACCESS_READS_RECORD, type AccessReadCount } from '@svc/contracts';
import { APP_CONFIG, APP_LOGGER, RpcClient } from '@svc/platform';
import { AccessReadsRecorder, type AccessReadsConfig } from '@svc/security';
import type { Logger } from 'pino';

/**
 * crew-api's reads of members' records, sent to auth-server (which owns the access history) in
 * one RPC per thousand counts, at least once a minute and on graceful shutdown. A batch that
 * is not answered is kept and sent again with the next flush.
 */
@Injectable()
export class RpcAccessReadsRecorder extends AccessReadsRecorder {
  constructor(
    private readonly rpc: RpcClient,
    @Inject(APP_CONFIG) config: AccessReadsConfig,
    @Inject(APP_LOGGER) logger: Logger,
  ) {
    super(logger, config.ACCESS_READS_FLUSH_MS);
  }

  protected async write(counts: readonly AccessReadCount[]): Promise<void> {
    await this.rpc.call(AUTH_ACCESS_READS_RECORD, { counts: [...counts] });
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { AUTH_ACCESS_READS_RECORD, type AccessReadCount } from '@svc/contracts';
import {
  APP_CONFIG,
  APP_LOGGER,
  RpcClient,
  AccessReadsRecorder,
  type AccessReadsConfig,
} from '@svc/platform';
import type { Logger } from 'pino';

/** Reads of members' records, sent to auth-server (owner of the access history) in batched RPCs. */
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

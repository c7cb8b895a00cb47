import { Inject, Injectable } from '@nestjs/common';
import type { AccessReadCount } from '@svc/contracts';
import { APP_CONFIG, APP_LOGGER, AccessReadsRecorder, type AccessReadsConfig } from '@svc/platform';
import type { Logger } from 'pino';
import { AccessHistoryService } from './access-history.service';

/** auth-server's own reads (`/oauth/userinfo`) go straight to its table, a batch a minute. */
@Injectable()
export class LocalAccessReadsRecorder extends AccessReadsRecorder {
  constructor(
    private readonly history: AccessHistoryService,
    @Inject(APP_CONFIG) config: AccessReadsConfig,
    @Inject(APP_LOGGER) logger: Logger,
  ) {
    super(logger, config.ACCESS_READS_FLUSH_MS);
  }

  protected async write(counts: readonly AccessReadCount[]): Promise<void> {
    await this.history.record(counts);
  }
}

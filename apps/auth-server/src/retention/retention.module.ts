import { Module } from '@nestjs/common';
import { APP_LOGGER, RetentionJob } from '@svc/platform';
import type { Logger } from 'pino';
import { AccessHistoryModule } from '../access-history/access-history.module';
import { AccessReadsRepository } from '../access-history/access-reads.repository';
import { GrantsRetentionRepository } from './grants-retention.repository';

/**
 * A day after expiry a replayed code is still refused as unknown, and the tokens it gave are long
 * rotated or expired; a pair's rotation history has nothing left to catch.
 */
export const EXPIRED_GRANT_GRACE_SECONDS = 24 * 60 * 60;

/** What auth-server prunes, and how old it must be. */
const retentionJob = (grants: GrantsRetentionRepository, reads: AccessReadsRepository, logger: Logger) =>
  new RetentionJob('auth-server', logger, {
    // Each authorization adds a code, each refresh a token pair: a day past expiry.
    codes: (n) => grants.deleteExpired('codes', EXPIRED_GRANT_GRACE_SECONDS, n),
    token_pairs: (n) => grants.deleteExpired('tokenPairs', EXPIRED_GRANT_GRACE_SECONDS, n),
    // A row per member, partner, scope and day: days past the 13 months the history keeps.
    access_reads: (n) => reads.deleteExpired(n),
  });

/** Housekeeping of auth-server's tables: expired codes and token pairs, old access history. */
@Module({
  imports: [AccessHistoryModule],
  providers: [
    GrantsRetentionRepository,
    {
      provide: RetentionJob,
      inject: [GrantsRetentionRepository, AccessReadsRepository, APP_LOGGER],
      useFactory: retentionJob,
    },
  ],
})
export class RetentionModule {}

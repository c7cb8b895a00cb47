import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, GroupBatcher, type ConfigOf } from '@svc/platform';
import { IntrospectionCache } from '@svc/security';
import type { AUTH_SERVER_CONFIG } from '../config';
import { RefreshBatchThread, tombstoneRotations } from './refresh-batch-thread';
import {
  TokenPairsRepository,
  type ExpectedRotation,
  type RefreshOutcome,
  type RefreshRotation,
} from './token-pairs.repository';

/** Rotations sent in one statement at most (a batch's locks are held until its commit). */
const MAX_REFRESH_BATCH = 16;

/**
 * Group commit of the common refresh: a live pair whose access token is the one derived from its
 * refresh token, without a narrowing. At most TOKEN_REFRESH_CONCURRENCY statements are in flight
 * per process, and the rotations that arrive meanwhile go together in the next one
 * (`token_refresh_batch`).
 *
 * Each batch first tombstones the access tokens its rotations end, all of them in one pipelined
 * Redis write, and is sent only when Redis has them: no rotation commits before its tombstone. A
 * write that fails fails the batch's calls, as it would have failed each alone. Written per
 * request instead, they cost a socket write each, the largest item in a profile of refresh rounds
 * (docs/architecture.md, "Token endpoint", step 9). Both writes are made by RefreshBatchThread, so
 * that their replies do not wait behind this thread's other work (step 13).
 *
 * Each statement gives way after 100 ms of waiting on a lock, so no lock (a large suspension's,
 * say) holds a slot, and every other partner's refreshes behind it, for longer; its rotations then
 * go alone, outside the slots.
 */
@Injectable()
export class RefreshGroupCommit {
  private readonly batches: GroupBatcher<ExpectedRotation, RefreshOutcome | undefined>;

  constructor(
    private readonly pairs: TokenPairsRepository,
    private readonly cache: IntrospectionCache,
    private readonly thread: RefreshBatchThread,
    @Inject(APP_CONFIG)
    config: Pick<ConfigOf<typeof AUTH_SERVER_CONFIG>, 'TOKEN_REFRESH_CONCURRENCY'>,
  ) {
    this.batches = new GroupBatcher(
      (batch) => this.send(batch),
      MAX_REFRESH_BATCH,
      config.TOKEN_REFRESH_CONCURRENCY,
    );
  }

  /**
   * Tombstones `expectedAccessDigest`, then rotates the pair if its access token is that one;
   * any other pair answers `unexpected` and is left as it was.
   */
  async rotate(rotation: RefreshRotation, expectedAccessDigest: string): Promise<RefreshOutcome> {
    const expected = { rotation, expectedAccessDigest };
    if (rotation.scopes !== null) {
      // A narrowing's scopes do not fit the batch's arrays: it goes alone.
      await tombstoneRotations(this.cache, [expected]);
      return this.pairs.rotateAlone(expected);
    }
    // Undefined: the batch gave way to a lock and changed nothing; its tombstones are written.
    return (await this.batches.submit(expected)) ?? this.pairs.rotateAlone(expected);
  }

  private async send(batch: readonly ExpectedRotation[]): Promise<(RefreshOutcome | undefined)[]> {
    const outcomes = await this.thread.write(batch);
    this.pairs.countRefreshBatch(outcomes);
    return outcomes;
  }
}

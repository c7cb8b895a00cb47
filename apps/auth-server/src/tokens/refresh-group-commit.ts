import { Inject, Injectable, Optional } from '@nestjs/common';
import { APP_CONFIG, AppMetrics, GroupBatcher, type ConfigOf } from '@svc/platform';
import type { Histogram } from 'prom-client';
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

/** Seconds; a batch's stages take from a fraction of a millisecond to its 100 ms lock wait and more. */
const STAGE_BUCKETS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

/** Where a batched refresh's time goes, stage by stage (`token_refresh_batch_stage_seconds`). */
const STAGES = ['waiting', 'tombstones', 'statement', 'handover'] as const;
type Stage = (typeof STAGES)[number];

/** A rotation waiting for its batch, since when (performance.now()). */
interface Queued {
  readonly expected: ExpectedRotation;
  readonly since: number;
}

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
 *
 * Each rotation's wait for its batch, and each batch's writes and hand-over, are timed
 * (`token_refresh_batch_stage_seconds`), so that a slower token endpoint says which stage moved.
 */
@Injectable()
export class RefreshGroupCommit {
  private readonly batches: GroupBatcher<Queued, RefreshOutcome | undefined>;
  private readonly stages?: Histogram<'stage'>;

  constructor(
    private readonly pairs: TokenPairsRepository,
    private readonly cache: IntrospectionCache,
    private readonly thread: RefreshBatchThread,
    @Inject(APP_CONFIG)
    config: Pick<ConfigOf<typeof AUTH_SERVER_CONFIG>, 'TOKEN_REFRESH_CONCURRENCY'>,
    @Optional() metrics?: AppMetrics,
  ) {
    this.batches = new GroupBatcher(
      (batch) => this.send(batch),
      MAX_REFRESH_BATCH,
      config.TOKEN_REFRESH_CONCURRENCY,
    );
    this.stages = metrics?.histogram(
      'token_refresh_batch_stage_seconds',
      'where a batched refresh spends its time: waiting (each rotation, until its batch is handed to the refresh batch thread), and per batch tombstones (the Redis write), statement (token_refresh_batch in PostgreSQL) and handover (the rest of the round trip to the thread and back)',
      ['stage'],
      STAGE_BUCKETS,
    );
    if (this.stages) AppMetrics.preset(this.stages, { stage: STAGES });
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
    return (
      (await this.batches.submit({ expected, since: performance.now() })) ?? this.pairs.rotateAlone(expected)
    );
  }

  private async send(batch: readonly Queued[]): Promise<(RefreshOutcome | undefined)[]> {
    const handed = performance.now();
    for (const queued of batch) this.observe('waiting', (handed - queued.since) / 1000);
    const { outcomes, took } = await this.thread.write(batch.map((b) => b.expected));
    const roundTrip = (performance.now() - handed) / 1000;
    this.observe('tombstones', took.tombstones);
    this.observe('statement', took.statement);
    this.observe('handover', Math.max(0, roundTrip - took.tombstones - took.statement));
    this.pairs.countRefreshBatch(outcomes);
    return outcomes;
  }

  private observe(stage: Stage, seconds: number): void {
    this.stages?.observe({ stage }, seconds);
  }
}

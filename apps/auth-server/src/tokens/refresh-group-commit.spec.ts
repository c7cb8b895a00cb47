import { heldStatements, settleAll } from '../../../../test/support/fakes/held-statements';
import { sample } from '../../../../test/support/metrics';
import { AppMetrics } from '@svc/platform';
import type { IntrospectionCache } from '@svc/security';
import { writeRefreshBatch, type RefreshBatchThread } from './refresh-batch-thread';
import { RefreshGroupCommit } from './refresh-group-commit';
import { TokenPairsRepository, type ExpectedRotation, type RefreshRotation } from './token-pairs.repository';

/**
 * Group commit of refreshes: statements in flight are capped, rotations that arrive meanwhile go
 * together after one write of their tombstones, and the rotations of a batch that fails (it gave
 * way to a lock) are sent alone, outside the cap. The SQL and Redis are faked here;
 * test/oauth/token-grant-functions.integration-spec.ts and
 * test/oauth/refresh-group-commit.integration-spec.ts run them.
 */
function setup(
  concurrency: number,
  batchFails?: (n: number) => Error | 'short' | undefined,
  tombstoneFails = false,
  metrics?: AppMetrics,
) {
  // Statements and tombstone writes, in the order they were made.
  const { sql, statements, letGo } = heldStatements(
    (digest) => ({ outcome: 'rotated', userId: `user-of-${digest}`, scopes: [], endedAccessDigest: 'a' }),
    batchFails,
  );
  const cache = {
    tombstoneEach: async (tokens: { clientId: string; digest: string }[]) => {
      statements.push({ name: 'tombstones', keys: tokens.map((t) => `${t.clientId}/${t.digest}`) });
      if (tombstoneFails) throw new Error('Connection is closed.');
    },
  } as unknown as IntrospectionCache;
  const pairs = new TokenPairsRepository(sql);
  // The thread's writes, made here (RefreshBatchThread's own spec runs a thread), and the batches
  // handed to it, by their rotations' refresh digests.
  const handedOver: string[][] = [];
  const thread = {
    write: (batch: readonly ExpectedRotation[]) => {
      handedOver.push(batch.map((b) => b.rotation.refreshDigest));
      return writeRefreshBatch(cache, pairs, batch);
    },
  } as unknown as RefreshBatchThread;
  const groupCommit = new RefreshGroupCommit(
    pairs,
    cache,
    thread,
    { TOKEN_REFRESH_CONCURRENCY: concurrency },
    metrics,
  );
  return { groupCommit, statements, letGo, handedOver };
}

const lockTimeout = () =>
  Object.assign(new Error('canceling statement due to lock timeout'), { code: '55P03' });

const rotation = (digest: string, scopes: string[] | null = null): RefreshRotation => ({
  refreshDigest: digest,
  clientId: 'partner',
  secretDigest: 'secret',
  scopes,
  next: {
    id: `tkp_${digest}`,
    accessDigest: `access-${digest}`,
    refreshDigest: `next-${digest}`,
    accessExpiresAt: new Date(),
    refreshExpiresAt: new Date(),
  },
  at: new Date(),
});

const users = (results: PromiseSettledResult<unknown>[]) =>
  results.map((r) => (r.status === 'fulfilled' ? (r.value as { userId: string }).userId : 'rejected'));

const tombstones = (...digests: string[]) => ['tombstones', digests.map((d) => `partner/x-${d}`)];

describe('RefreshGroupCommit', () => {
  it('sends a rotation at once while fewer than TOKEN_REFRESH_CONCURRENCY statements are in flight, then batches the rest, each batch after one write of its tombstones', async () => {
    const { groupCommit, statements, letGo } = setup(2);
    const calls = ['r1', 'r2', 'r3', 'r4', 'r5'].map((d) => groupCommit.rotate(rotation(d), `x-${d}`));
    await new Promise((r) => setImmediate(r));
    expect(statements.map((s) => [s.name, s.keys])).toEqual([
      tombstones('r1'),
      tombstones('r2'),
      ['token_refresh_batch', ['r1']],
      ['token_refresh_batch', ['r2']],
    ]);
    const results = await settleAll(letGo, calls);
    expect(statements.slice(4).map((s) => [s.name, s.keys])).toEqual([
      tombstones('r3', 'r4', 'r5'),
      ['token_refresh_batch', ['r3', 'r4', 'r5']],
    ]);
    expect(users(results)).toEqual(['user-of-r1', 'user-of-r2', 'user-of-r3', 'user-of-r4', 'user-of-r5']);
  });

  it('hands every batch to the batch thread, a lone rotation too', async () => {
    const { groupCommit, statements, letGo, handedOver } = setup(1);
    const calls = ['r1', 'r2', 'r3'].map((d) => groupCommit.rotate(rotation(d), `x-${d}`));
    const results = await settleAll(letGo, calls);
    expect(handedOver).toEqual([['r1'], ['r2', 'r3']]);
    expect(statements.map((s) => [s.name, s.keys])).toEqual([
      tombstones('r1'),
      ['token_refresh_batch', ['r1']],
      tombstones('r2', 'r3'),
      ['token_refresh_batch', ['r2', 'r3']],
    ]);
    expect(users(results)).toEqual(['user-of-r1', 'user-of-r2', 'user-of-r3']);
  });

  it('sends each rotation of a batch that gave way alone, outside the cap, without writing its tombstones again, and fails only the ones that fail alone', async () => {
    const { groupCommit, statements, letGo } = setup(1, (n) => (n === 2 ? lockTimeout() : undefined));
    const calls = ['r1', 'r2', 'fails-r3', 'r4'].map((d) => groupCommit.rotate(rotation(d), `x-${d}`));
    await letGo(); // r1's tombstone is written and its batch sent
    await letGo(); // r1's batch answers; r2, fails-r3 and r4 go in the next one, which gives way
    await letGo();
    // The slot is free again at once: a later rotation does not wait for the ones sent alone.
    const later = groupCommit.rotate(rotation('r5'), 'x-r5');
    await new Promise((r) => setImmediate(r));
    expect(statements.at(-1)).toEqual({ name: 'token_refresh_batch', keys: ['r5'] });
    const results = await settleAll(letGo, [...calls, later]);
    expect(statements.map((s) => [s.name, s.keys])).toEqual([
      tombstones('r1'),
      ['token_refresh_batch', ['r1']],
      tombstones('r2', 'fails-r3', 'r4'),
      ['token_refresh_batch', ['r2', 'fails-r3', 'r4']],
      ['token_refresh', ['r2']],
      ['token_refresh', ['fails-r3']],
      ['token_refresh', ['r4']],
      tombstones('r5'),
      ['token_refresh_batch', ['r5']],
    ]);
    expect(users(results)).toEqual(['user-of-r1', 'user-of-r2', 'rejected', 'user-of-r4', 'user-of-r5']);
    expect((results[2] as PromiseRejectedResult).reason).toEqual(new Error('statement failed for fails-r3'));
  });

  it('fails the calls of a batch that failed otherwise, or answered short, without sending them again', async () => {
    const down = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    for (const failure of [down, 'short' as const]) {
      const { groupCommit, statements, letGo } = setup(1, () => failure);
      const results = await settleAll(
        letGo,
        ['r1', 'r2'].map((d) => groupCommit.rotate(rotation(d), `x-${d}`)),
      );
      expect(statements.map((s) => s.name)).toEqual([
        'tombstones',
        'token_refresh_batch',
        'tombstones',
        'token_refresh_batch',
      ]);
      expect(users(results)).toEqual(['rejected', 'rejected']);
    }
  });

  it('sends no statement for a batch whose tombstones were not written, and fails each of its calls', async () => {
    const { groupCommit, statements, letGo } = setup(1, () => undefined, true);
    const results = await settleAll(
      letGo,
      ['r1', 'r2', 'r3'].map((d) => groupCommit.rotate(rotation(d), `x-${d}`)),
    );
    expect(statements.map((s) => [s.name, s.keys])).toEqual([tombstones('r1'), tombstones('r2', 'r3')]);
    expect(users(results)).toEqual(['rejected', 'rejected', 'rejected']);
    expect((results[0] as PromiseRejectedResult).reason).toEqual(new Error('Connection is closed.'));
  });

  it('sends a narrowing alone, outside the batches, after its own tombstone', async () => {
    const { groupCommit, statements, letGo } = setup(1);
    const calls = [
      groupCommit.rotate(rotation('r1'), 'x-r1'),
      groupCommit.rotate(rotation('r2', ['profile:read']), 'x-r2'),
      groupCommit.rotate(rotation('r3'), 'x-r3'),
    ];
    await settleAll(letGo, calls);
    expect(statements.map((s) => [s.name, s.keys])).toEqual([
      tombstones('r1'),
      tombstones('r2'),
      ['token_refresh_batch', ['r1']],
      ['token_refresh', ['r2']],
      tombstones('r3'),
      ['token_refresh_batch', ['r3']],
    ]);
  });

  it('times each stage: every rotation’s wait for its batch, and each batch’s tombstones, statement and handover', async () => {
    const metrics = new AppMetrics('auth-server');
    const { groupCommit, letGo } = setup(1, undefined, false, metrics);
    await settleAll(
      letGo,
      ['r1', 'r2', 'r3'].map((d) => groupCommit.rotate(rotation(d), `x-${d}`)),
    );
    const text = await metrics.registry.metrics();
    const of = (suffix: string, stage: string) =>
      sample(text, `token_refresh_batch_stage_seconds_${suffix}`, { stage });
    // r1 alone, then r2 and r3 together: three waits, two batches.
    expect(['waiting', 'tombstones', 'statement', 'handover'].map((stage) => of('count', stage))).toEqual([
      3, 2, 2, 2,
    ]);
    // r2 and r3 waited for r1's batch, which the fake held until the test let it go.
    expect(of('sum', 'waiting')).toBeGreaterThan(0);
    expect(of('sum', 'statement')).toBeGreaterThan(0);
  });
});

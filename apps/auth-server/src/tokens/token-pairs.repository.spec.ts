import type { Sql } from '@svc/platform';
import { TokenPairsRepository, type RefreshRotation } from './token-pairs.repository';

/**
 * Group commit of refreshes: statements in flight are capped, rotations that arrive meanwhile go
 * together, and the rotations of a batch that fails (it gave way to a lock) are sent alone, outside
 * the cap. The SQL is faked here; test/oauth/token-grant-functions.integration-spec.ts runs it.
 */
function setup(
  concurrency: number,
  batchFails: (n: number) => Error | 'short' | undefined = () => undefined,
) {
  const statements: { name: string; digests: string[] }[] = [];
  const release: (() => void)[] = [];
  let batches = 0;
  const sql = {
    prepared: async (name: string, _text: string, values: unknown[]) => {
      const digests = name.endsWith('batch') ? (values[0] as string[]) : [values[0] as string];
      statements.push({ name, digests });
      // Each statement stays in flight until the test lets it go.
      await new Promise<void>((resolve) => release.push(resolve));
      if (name.endsWith('batch')) {
        const failure = batchFails(++batches);
        if (failure === 'short') return [];
        if (failure) throw failure;
      }
      if (digests.some((d) => d.startsWith('fails')))
        throw new Error(`statement failed for ${digests.join()}`);
      return digests.map((d) => ({
        outcome: 'rotated',
        userId: `user-of-${d}`,
        scopes: [],
        endedAccessDigest: 'a',
      }));
    },
  } as unknown as Sql;
  const repository = new TokenPairsRepository(sql, { TOKEN_REFRESH_CONCURRENCY: concurrency });
  const letGo = async () => {
    while (release.length > 0) release.shift()!();
    await new Promise((r) => setImmediate(r));
  };
  return { repository, statements, letGo };
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

async function settleAll(letGo: () => Promise<void>, calls: Promise<unknown>[]) {
  const all = Promise.allSettled(calls);
  for (let i = 0; i < 10; i++) await letGo();
  return all;
}

const users = (results: PromiseSettledResult<unknown>[]) =>
  results.map((r) => (r.status === 'fulfilled' ? (r.value as { userId: string }).userId : 'rejected'));

describe('TokenPairsRepository: group commit of refreshes', () => {
  it('sends a rotation at once while fewer than TOKEN_REFRESH_CONCURRENCY statements are in flight, then batches the rest', async () => {
    const { repository, statements, letGo } = setup(2);
    const calls = ['r1', 'r2', 'r3', 'r4', 'r5'].map((d) => repository.rotateExpected(rotation(d), `x-${d}`));
    await new Promise((r) => setImmediate(r));
    expect(statements).toEqual([
      { name: 'token_refresh_batch', digests: ['r1'] },
      { name: 'token_refresh_batch', digests: ['r2'] },
    ]);
    const results = await settleAll(letGo, calls);
    expect(statements.slice(2)).toEqual([{ name: 'token_refresh_batch', digests: ['r3', 'r4', 'r5'] }]);
    expect(users(results)).toEqual(['user-of-r1', 'user-of-r2', 'user-of-r3', 'user-of-r4', 'user-of-r5']);
  });

  it('sends each rotation of a batch that gave way alone, outside the cap, and fails only the ones that fail alone', async () => {
    const { repository, statements, letGo } = setup(1, (n) => (n === 2 ? lockTimeout() : undefined));
    const calls = ['r1', 'r2', 'fails-r3', 'r4'].map((d) => repository.rotateExpected(rotation(d), `x-${d}`));
    await letGo(); // r1's batch answers; r2, fails-r3 and r4 go in the next one, which gives way
    await letGo();
    // The slot is free again at once: a later rotation does not wait for the ones sent alone.
    const later = repository.rotateExpected(rotation('r5'), 'x-r5');
    await new Promise((r) => setImmediate(r));
    expect(statements.at(-1)).toEqual({ name: 'token_refresh_batch', digests: ['r5'] });
    const results = await settleAll(letGo, [...calls, later]);
    expect(statements.map((s) => [s.name, s.digests])).toEqual([
      ['token_refresh_batch', ['r1']],
      ['token_refresh_batch', ['r2', 'fails-r3', 'r4']],
      ['token_refresh', ['r2']],
      ['token_refresh', ['fails-r3']],
      ['token_refresh', ['r4']],
      ['token_refresh_batch', ['r5']],
    ]);
    expect(users(results)).toEqual(['user-of-r1', 'user-of-r2', 'rejected', 'user-of-r4', 'user-of-r5']);
    expect((results[2] as PromiseRejectedResult).reason).toEqual(new Error('statement failed for fails-r3'));
  });

  it('fails the calls of a batch that failed otherwise, or answered short, without sending them again', async () => {
    const down = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    for (const failure of [down, 'short' as const]) {
      const { repository, statements, letGo } = setup(1, () => failure);
      const results = await settleAll(
        letGo,
        ['r1', 'r2'].map((d) => repository.rotateExpected(rotation(d), `x-${d}`)),
      );
      expect(statements.map((s) => s.name)).toEqual(['token_refresh_batch', 'token_refresh_batch']);
      expect(users(results)).toEqual(['rejected', 'rejected']);
    }
  });

  it('sends a narrowing alone, outside the batches', async () => {
    const { repository, statements, letGo } = setup(1);
    const calls = [
      repository.rotateExpected(rotation('r1'), 'x'),
      repository.rotateExpected(rotation('r2', ['profile:read']), 'x'),
      repository.rotateExpected(rotation('r3'), 'x'),
    ];
    await settleAll(letGo, calls);
    expect(statements.map((s) => [s.name, s.digests])).toEqual([
      ['token_refresh_batch', ['r1']],
      ['token_refresh', ['r2']],
      ['token_refresh_batch', ['r3']],
    ]);
  });
});

import {
  heldStatements,
  settleAll,
  type SentStatement,
} from '../../../../test/support/fakes/held-statements';
import { ExchangeGroupCommit } from './exchange-group-commit';
import { TokenPairsRepository, type CodeExchange } from './token-pairs.repository';

/**
 * Group commit of code exchanges: statements in flight are capped, exchanges that arrive meanwhile
 * go together in the next one, and the exchanges of a batch that gave way to a lock are sent alone,
 * outside the cap. The SQL is faked here; test/oauth/token-grant-functions.integration-spec.ts and
 * test/oauth/exchange-group-commit.integration-spec.ts run it.
 */
function setup(batchFails?: (n: number) => Error | 'short' | undefined) {
  const { sql, statements, letGo } = heldStatements(
    (code) => ({ outcome: 'issued', scopes: [`scope-of-${code}`] }),
    batchFails,
  );
  const groupCommit = new ExchangeGroupCommit(new TokenPairsRepository(sql), {
    TOKEN_EXCHANGE_CONCURRENCY: 1,
  });
  return { groupCommit, statements, letGo };
}

const lockTimeout = () =>
  Object.assign(new Error('canceling statement due to lock timeout'), { code: '55P03' });

const exchange = (code: string): CodeExchange => ({
  codeDigest: code,
  clientId: 'partner',
  secretDigest: 'secret',
  redirectUri: 'https://partner.example/cb',
  codeChallenge: 'challenge',
  next: {
    id: `tkp_${code}`,
    accessDigest: `access-${code}`,
    refreshDigest: `refresh-${code}`,
    accessExpiresAt: new Date(),
    refreshExpiresAt: new Date(),
  },
  at: new Date(),
});

const scopes = (results: PromiseSettledResult<unknown>[]) =>
  results.map((r) =>
    r.status === 'fulfilled' ? (r.value as { scopes: string[] }).scopes.join() : 'rejected',
  );

const sent = (statements: SentStatement[]) => statements.map((s) => [s.name, s.keys]);

describe('ExchangeGroupCommit', () => {
  it('sends an exchange at once, as a batch of one, while the slot is free', async () => {
    const { groupCommit, statements, letGo } = setup();
    const call = groupCommit.exchange(exchange('c1'));
    // Not awaited yet: the statement went out within the call itself.
    expect(sent(statements)).toEqual([['token_exchange_batch', ['c1']]]);
    expect(scopes(await settleAll(letGo, [call]))).toEqual(['scope-of-c1']);
  });

  it('sends the exchanges that arrive while a statement is in flight together, in the next one statement', async () => {
    const { groupCommit, statements, letGo } = setup();
    const calls = ['c1', 'c2', 'c3', 'c4'].map((c) => groupCommit.exchange(exchange(c)));
    expect(sent(statements)).toEqual([['token_exchange_batch', ['c1']]]);
    const results = await settleAll(letGo, calls);
    expect(sent(statements)).toEqual([
      ['token_exchange_batch', ['c1']],
      ['token_exchange_batch', ['c2', 'c3', 'c4']],
    ]);
    expect(scopes(results)).toEqual(['scope-of-c1', 'scope-of-c2', 'scope-of-c3', 'scope-of-c4']);
  });

  it('sends each exchange of a batch that gave way alone, outside the slot, and fails only the ones that fail alone', async () => {
    const { groupCommit, statements, letGo } = setup((n) => (n === 2 ? lockTimeout() : undefined));
    const calls = ['c1', 'c2', 'fails-c3', 'c4'].map((c) => groupCommit.exchange(exchange(c)));
    await letGo(); // c1's batch answers; c2, fails-c3 and c4 go in the next one
    await letGo(); // which gives way: each is sent alone
    // The slot is free again at once: a later exchange does not wait for the ones sent alone.
    const later = groupCommit.exchange(exchange('c5'));
    expect(statements.at(-1)).toEqual({ name: 'token_exchange_batch', keys: ['c5'] });
    const results = await settleAll(letGo, [...calls, later]);
    expect(sent(statements)).toEqual([
      ['token_exchange_batch', ['c1']],
      ['token_exchange_batch', ['c2', 'fails-c3', 'c4']],
      ['token_exchange', ['c2']],
      ['token_exchange', ['fails-c3']],
      ['token_exchange', ['c4']],
      ['token_exchange_batch', ['c5']],
    ]);
    expect(scopes(results)).toEqual(['scope-of-c1', 'scope-of-c2', 'rejected', 'scope-of-c4', 'scope-of-c5']);
    expect((results[2] as PromiseRejectedResult).reason).toEqual(new Error('statement failed for fails-c3'));
  });

  it('fails every call of a batch that failed otherwise, or answered short, and sends none of them again', async () => {
    const down = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    for (const failure of [down, 'short' as const]) {
      const { groupCommit, statements, letGo } = setup((n) => (n === 2 ? failure : undefined));
      const results = await settleAll(
        letGo,
        ['c1', 'c2', 'c3'].map((c) => groupCommit.exchange(exchange(c))),
      );
      expect(sent(statements)).toEqual([
        ['token_exchange_batch', ['c1']],
        ['token_exchange_batch', ['c2', 'c3']],
      ]);
      expect(scopes(results)).toEqual(['scope-of-c1', 'rejected', 'rejected']);
      expect((results[1] as PromiseRejectedResult).reason).toEqual(
        failure === 'short' ? new Error('token_exchange_batch answered 0 rows for 2 items') : down,
      );
    }
  });
});

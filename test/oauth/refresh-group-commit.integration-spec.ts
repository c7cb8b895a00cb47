import type { SandboxPartner } from '@svc/contracts';
import { Sql } from '@svc/platform';
import { TokensService } from '../../apps/auth-server/src/tokens/tokens.service';
import { RefreshBatchThread } from '../../apps/auth-server/src/tokens/refresh-batch-thread';
import { member } from '../support/factories';
import { startAuthServer, type AuthServerHarness } from '../support/starters/auth-server';
import { issueTokens } from '../support/oauth/flow';
import { onboardPartner } from '../support/oauth/onboard';
import { expectOAuthError, expectTokenResponse, OAuthHttp } from '../support/oauth/oauth-http';
import { sample, scrape } from '../support/metrics';
import type { TokenResponse } from '../support/factories';

/**
 * Group commit of refreshes (docs/architecture.md, "Token endpoint") on two replicas that send one
 * refresh statement at a time each (TOKEN_REFRESH_CONCURRENCY=1, the default), so that the refreshes arriving
 * meanwhile go together in `token_refresh_batch`: every request is answered as it would have been
 * alone, the race of one token still has one winner across replicas, and a suspension made while
 * batches hold their rotations' locks neither deadlocks nor lets a refresh through after it.
 */
jest.setTimeout(90_000);

let a: AuthServerHarness;
let b: AuthServerHarness;
let httpA: OAuthHttp;
let httpB: OAuthHttp;

beforeAll(async () => {
  a = await startAuthServer({ TOKEN_REFRESH_CONCURRENCY: '1' });
  b = await startAuthServer({ TOKEN_REFRESH_CONCURRENCY: '1' });
  httpA = new OAuthHttp(a.url);
  httpB = new OAuthHttp(b.url);
}, 90_000);

afterAll(async () => {
  await a?.close();
  await b?.close();
});

const MEMBERS = ['alex.morgan@sandbox.test', 'sam.lee@sandbox.test', 'jo.kim@sandbox.test'] as const;

/** `count` token families of one partner, spread over the sandbox members. */
async function families(p: SandboxPartner, count: number): Promise<TokenResponse[]> {
  const issued: TokenResponse[] = [];
  for (let i = 0; i < count; i++) {
    const { tokens } = await issueTokens(a.rpc, httpA, { partner: p, member: member(MEMBERS[i % 3]) });
    issued.push(tokens);
  }
  return issued;
}

/**
 * The refresh statements a replica sends from now on, with how many rotations each carried: the
 * batches it hands its refresh batch thread (one `token_refresh_batch` each), and its lone
 * `token_refresh` statements.
 */
function refreshStatements(replica: AuthServerHarness): { batch: boolean; rotations: number }[] {
  const sent: { batch: boolean; rotations: number }[] = [];
  const sql = replica.app.get(Sql);
  const prepared = sql.prepared.bind(sql);
  jest.spyOn(sql, 'prepared').mockImplementation((name, text, values) => {
    if (name === 'token_refresh') sent.push({ batch: false, rotations: 1 });
    return prepared(name, text, values);
  });
  const thread = replica.app.get(RefreshBatchThread);
  const write = thread.write.bind(thread);
  jest.spyOn(thread, 'write').mockImplementation((batch) => {
    sent.push({ batch: true, rotations: batch.length });
    return write(batch);
  });
  return sent;
}

describe('refreshes that arrive together go together', () => {
  it('answers each as alone: one winner per token across replicas, every winner valid, every loser invalid_grant', async () => {
    const p = await onboardPartner(a, 'group-commit');
    const issued = await families(p, 12);
    const sentByA = refreshStatements(a);
    // Each family's token once on A, and four of them a second time on B at the same moment.
    const requests = [
      ...issued.map((t, i) => ({ family: i, answer: httpA.refresh(p, t.refresh_token) })),
      ...issued.slice(0, 4).map((t, i) => ({ family: i, answer: httpB.refresh(p, t.refresh_token) })),
    ];
    const answers = await Promise.all(requests.map(async (r) => ({ ...r, res: await r.answer })));

    const batches = sentByA.filter((s) => s.batch);
    expect(Math.max(...batches.map((s) => s.rotations))).toBeGreaterThan(1);
    expect(batches.reduce((n, s) => n + s.rotations, 0)).toBeGreaterThanOrEqual(12);
    // What the replica counts for its operators: the batches and the rotations they carried.
    const metrics = await scrape(a.app);
    const counted = (name: string) =>
      (sample(metrics, name, { outcome: 'committed' }) ?? 0) +
      (sample(metrics, name, { outcome: 'gave_way' }) ?? 0);
    expect(counted('token_refresh_batches_total')).toBe(batches.length);
    expect(counted('token_refresh_batched_rotations_total')).toBe(
      batches.reduce((n, s) => n + s.rotations, 0),
    );
    // And where their time went: each rotation's wait for its batch, each batch's stages.
    const timed = (stage: string) => sample(metrics, 'token_refresh_batch_stage_seconds_count', { stage });
    expect(['waiting', 'tombstones', 'statement', 'handover'].map(timed)).toEqual([
      batches.reduce((n, s) => n + s.rotations, 0),
      batches.length,
      batches.length,
      batches.length,
    ]);
    expect(sample(metrics, 'token_refresh_batch_stage_seconds_sum', { stage: 'statement' })).toBeGreaterThan(
      0,
    );
    for (let family = 0; family < issued.length; family++) {
      const mine = answers.filter((r) => r.family === family);
      const won = mine.filter((r) => r.res.status === 200);
      expect(won).toHaveLength(1);
      for (const lost of mine.filter((r) => r.res.status !== 200))
        expectOAuthError(lost.res, 400, 'invalid_grant');
      const winner = expectTokenResponse(won[0].res);
      // The old access token is refused at once and the new pair works, on the other replica too.
      expect((await httpB.userinfo(issued[family].access_token)).status).toBe(401);
      expect((await httpB.userinfo(winner.access_token)).status).toBe(200);
      expectTokenResponse(await httpB.refresh(p, winner.refresh_token));
    }
  });
});

describe('a suspension while batches hold their locks', () => {
  it('neither deadlocks nor fails a refresh, and no refresh gets through after it', async () => {
    const p = await onboardPartner(a, 'group-commit');
    const issued = await families(p, 12);
    const refreshes = issued.map((t) => httpA.refresh(p, t.refresh_token));
    const suspended = b.app.get(TokensService).setPartnerSuspended(p.client_id, true);
    const answers = await Promise.all(refreshes);
    await expect(suspended).resolves.not.toThrow();

    // Each one in flight either finished before the suspension, or was refused: as a suspended
    // client, or, read before the suspension committed, for a token it had revoked meanwhile.
    const winners: TokenResponse[] = [];
    for (const res of answers) {
      if (res.status === 200) winners.push(expectTokenResponse(res));
      else if (res.status === 401) expectOAuthError(res, 401, 'invalid_client');
      else expectOAuthError(res, 400, 'invalid_grant');
    }
    // What was issued before the suspension committed was revoked by it.
    for (const w of winners) {
      expect((await httpB.userinfo(w.access_token)).status).toBe(401);
      expectOAuthError(await httpA.refresh(p, w.refresh_token), 401, 'invalid_client');
    }
  });
});

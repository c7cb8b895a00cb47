import type { SandboxPartner } from '@svc/contracts';
import { TokensService } from '../../apps/auth-server/src/tokens/tokens.service';
import { member, type TokenResponse } from '../support/factories';
import { startAuthServer, type AuthServerHarness } from '../support/starters/auth-server';
import { issueTokens, expectOAuthError, expectTokenResponse, OAuthHttp } from '../support/oauth/flow';
import { createPartner } from '../support/app-factories';

/**
 * Many refreshes at once on two replicas: every request is answered as it would have been alone,
 * the race of one token has one winner across replicas, and a suspension made while refreshes are
 * in flight neither deadlocks nor lets a pair through: one committed beside it is revoked with the
 * rest (the partner's lock), and none gets through after it.
 */
jest.setTimeout(90_000);

let a: AuthServerHarness;
let b: AuthServerHarness;
let httpA: OAuthHttp;
let httpB: OAuthHttp;

beforeAll(async () => {
  a = await startAuthServer();
  b = await startAuthServer();
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

describe('refreshes that arrive together', () => {
  it('answers each as alone: one winner per token across replicas, every winner valid, every loser invalid_grant', async () => {
    const p = await createPartner(a, { label: 'group-commit' });
    const issued = await families(p, 12);
    // Each family's token once on A, and four of them a second time on B at the same moment.
    const requests = [
      ...issued.map((t, i) => ({ family: i, answer: httpA.refresh(p, t.refresh_token) })),
      ...issued.slice(0, 4).map((t, i) => ({ family: i, answer: httpB.refresh(p, t.refresh_token) })),
    ];
    const answers = await Promise.all(requests.map(async (r) => ({ ...r, res: await r.answer })));

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

describe('a suspension while refreshes are in flight', () => {
  it('neither deadlocks nor fails a refresh, and no refresh gets through after it', async () => {
    const p = await createPartner(a, { label: 'group-commit' });
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

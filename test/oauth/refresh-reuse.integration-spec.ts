import { REFRESH_RACE_WINDOW_MS } from '../../apps/auth-server/src/tokens/tokens.service';
import { partner, type TokenResponse } from '../support/factories';
import { useAuthServer } from '../support/starters/auth-server';
import { issueTokens, expectOAuthError, expectTokenResponse } from '../support/oauth/flow';

/**
 * Refresh-token reuse detection (RFC 9700 §4.14.2, issue 13): a rotated refresh token presented
 * again revokes its whole family (every pair issued from the same authorization code, tombstoned so
 * the next bearer request is 401), except the immediately previous token within
 * REFRESH_TOKEN_REUSE_GRACE_SECONDS of its rotation, which gets a new pair and revokes the pair
 * issued moments before (a client that lost the response). The previous token sent again less than
 * REFRESH_RACE_WINDOW_MS (1 s) after its rotation is one of several concurrent requests: it loses
 * the race and changes nothing. The grace here is 4 s so "after the grace" is quick to reach.
 */
jest.setTimeout(30_000);

const GRACE_SECONDS = 4;
/** Past the race window, well inside the grace. */
const AFTER_RACE_WINDOW_MS = REFRESH_RACE_WINDOW_MS + 300;
const { auth, http } = useAuthServer({ REFRESH_TOKEN_REUSE_GRACE_SECONDS: String(GRACE_SECONDS) });
const A = partner('sandbox-partner');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function rotate(tokens: TokenResponse): Promise<TokenResponse> {
  return expectTokenResponse(await http.refresh(A, tokens.refresh_token));
}

async function expectAlive(tokens: TokenResponse) {
  expect((await http.userinfo(tokens.access_token)).status).toBe(200);
}

/** Both halves dead: the access token is refused at the bearer check, the refresh token too. */
async function expectDead(tokens: TokenResponse) {
  expect((await http.userinfo(tokens.access_token)).status).toBe(401);
  expectOAuthError(await http.refresh(A, tokens.refresh_token), 400, 'invalid_grant');
}

/** A chain A→B→C; C is the live pair. */
async function chain(): Promise<[TokenResponse, TokenResponse, TokenResponse]> {
  const { tokens: a } = await issueTokens(auth.rpc, http);
  const b = await rotate(a);
  const c = await rotate(b);
  return [a, b, c];
}

describe('reuse of a rotated refresh token ends the family (RFC 9700 §4.14.2)', () => {
  it('A→B→C, then A again: invalid_grant, and C’s access token is 401 and its refresh token dead', async () => {
    const [a, , c] = await chain();
    await expectAlive(c);
    expectOAuthError(await http.refresh(A, a.refresh_token), 400, 'invalid_grant');
    await expectDead(c);
  });

  it('a token two rotations back is reuse even within the grace window', async () => {
    const [a, b, c] = await chain();
    expectOAuthError(await http.refresh(A, a.refresh_token), 400, 'invalid_grant');
    await expectDead(c);
    // The previous token lost its grace with the family.
    expectOAuthError(await http.refresh(A, b.refresh_token), 400, 'invalid_grant');
  });

  it('the previous token after the grace window ends the family', async () => {
    const [, b, c] = await chain();
    await sleep(GRACE_SECONDS * 1000 + 500);
    expectOAuthError(await http.refresh(A, b.refresh_token), 400, 'invalid_grant');
    await expectDead(c);
  });

  it('the previous token within the grace, once its successor was used, ends the family', async () => {
    const [, b, c] = await chain();
    const d = await rotate(c);
    expectOAuthError(await http.refresh(A, b.refresh_token), 400, 'invalid_grant');
    await expectDead(d);
  });

  it('does not reach another family of the same member and partner', async () => {
    const [a, , c] = await chain();
    const { tokens: other } = await issueTokens(auth.rpc, http);
    expectOAuthError(await http.refresh(A, a.refresh_token), 400, 'invalid_grant');
    await expectDead(c);
    await expectAlive(other);
    await rotate(other);
  });
});

describe('the grace window for the immediately previous token (a lost response)', () => {
  it('B within the race window after B→C is a lost race: invalid_grant, and C keeps working', async () => {
    const [, b, c] = await chain();
    expectOAuthError(await http.refresh(A, b.refresh_token), 400, 'invalid_grant');
    await expectAlive(c);
    await rotate(c);
  });

  it('B within the grace after B→C issues D and revokes C; D keeps working', async () => {
    const [, b, c] = await chain();
    await sleep(AFTER_RACE_WINDOW_MS);
    const d = expectTokenResponse(await http.refresh(A, b.refresh_token));
    expect(d.refresh_token).not.toBe(c.refresh_token);
    await expectAlive(d);
    expect((await http.userinfo(c.access_token)).status).toBe(401);
    // D rotates normally.
    const e = await rotate(d);
    await expectAlive(e);
  });

  it('the superseded pair C presented afterwards is reuse: the family ends, D included', async () => {
    const [, b, c] = await chain();
    await sleep(AFTER_RACE_WINDOW_MS);
    const d = expectTokenResponse(await http.refresh(A, b.refresh_token));
    expectOAuthError(await http.refresh(A, c.refresh_token), 400, 'invalid_grant');
    await expectDead(d);
  });

  it('the grace keeps the narrowing rule: a wider scope is invalid_scope and C stays live', async () => {
    const { tokens: a } = await issueTokens(auth.rpc, http, { scope: 'profile:read seatime:read' });
    const b = expectTokenResponse(await http.refresh(A, a.refresh_token, 'profile:read'));
    const c = await rotate(b);
    await sleep(AFTER_RACE_WINDOW_MS);
    expectOAuthError(
      await http.refresh(A, b.refresh_token, 'profile:read seatime:read'),
      400,
      'invalid_scope',
    );
    await expectAlive(c);
  });
});

describe('revocation ends the family (RFC 7009 §2.1)', () => {
  it('revoking C makes B’s grace answer invalid_grant, and nothing of the family works', async () => {
    const [a, b, c] = await chain();
    await sleep(AFTER_RACE_WINDOW_MS);
    expect((await http.revokeToken(A, c.refresh_token)).status).toBe(200);
    expectOAuthError(await http.refresh(A, b.refresh_token), 400, 'invalid_grant');
    await expectDead(c);
    expectOAuthError(await http.refresh(A, a.refresh_token), 400, 'invalid_grant');
  });

  it('revoking the rotated-away A ends the live pair C', async () => {
    const [a, , c] = await chain();
    expect((await http.revokeToken(A, a.access_token)).status).toBe(200);
    await expectDead(c);
  });
});

describe('concurrency', () => {
  it('reuse racing a legitimate refresh: the reuse is invalid_grant and no token of the family survives', async () => {
    for (let round = 0; round < 4; round += 1) {
      const [a, , c] = await chain();
      const [reuse, legit] = await Promise.all([
        http.refresh(A, a.refresh_token),
        http.refresh(A, c.refresh_token),
      ]);
      expectOAuthError(reuse, 400, 'invalid_grant');
      await expectDead(c);
      if (legit.status === 200) await expectDead(expectTokenResponse(legit));
      else expectOAuthError(legit, 400, 'invalid_grant');
    }
  });

  it('the previous token presented 6 times at once within the grace: one new pair, which stays valid', async () => {
    const [, b, c] = await chain();
    await sleep(AFTER_RACE_WINDOW_MS);
    const answers = await Promise.all(Array.from({ length: 6 }, () => http.refresh(A, b.refresh_token)));
    const winners = answers.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    for (const loser of answers.filter((r) => r.status !== 200))
      expectOAuthError(loser, 400, 'invalid_grant');
    const d = expectTokenResponse(winners[0]);
    await expectAlive(d);
    expect((await http.userinfo(c.access_token)).status).toBe(401);
    await rotate(d);
  });

  it('a concurrent refresh race with the current token is not reuse: the winner’s pair stays valid', async () => {
    const [, , c] = await chain();
    const answers = await Promise.all(Array.from({ length: 10 }, () => http.refresh(A, c.refresh_token)));
    const winners = answers.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    for (const loser of answers.filter((r) => r.status !== 200))
      expectOAuthError(loser, 400, 'invalid_grant');
    const d = expectTokenResponse(winners[0]);
    await expectAlive(d);
    await rotate(d);
  });
});

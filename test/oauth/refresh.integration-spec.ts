import { partner } from '../support/factories';
import { useAuthServer } from '../support/starters/auth-server';
import { issueTokens, expectOAuthError, expectTokenResponse, scopeSet } from '../support/oauth/flow';

/**
 * grant_type=refresh_token (RFC 6749 §6; docs/rules.md, Authentication): every use rotates the
 * pair, the old pair is revoked atomically, scope narrows and never widens, and of concurrent
 * refreshes with one token exactly one wins (docs/rules.md, OAuth).
 */
jest.setTimeout(30_000);

const { auth, http } = useAuthServer();
const A = partner('sandbox-partner');

describe('rotation (RFC 6749 §6; RFC 9700 §4.14.2)', () => {
  it('issues a new pair and revokes the old access and refresh tokens', async () => {
    const { tokens } = await issueTokens(auth.rpc, http);
    const next = expectTokenResponse(await http.refresh(A, tokens.refresh_token));
    expect(next.access_token).not.toBe(tokens.access_token);
    expect(next.refresh_token).not.toBe(tokens.refresh_token);
    expect((await http.userinfo(tokens.access_token)).status).toBe(401);
    expect((await http.userinfo(next.access_token)).status).toBe(200);
    expectOAuthError(await http.refresh(A, tokens.refresh_token), 400, 'invalid_grant');
  });

  it('without scope keeps the granted scope (RFC 6749 §6)', async () => {
    const { tokens } = await issueTokens(auth.rpc, http, { scope: 'profile:read seatime:read' });
    const next = expectTokenResponse(await http.refresh(A, tokens.refresh_token));
    expect(scopeSet(next.scope)).toEqual(['profile:read', 'seatime:read']);
  });

  it('a chain of refreshes keeps working, each token usable once', async () => {
    let { tokens } = await issueTokens(auth.rpc, http);
    for (let i = 0; i < 5; i += 1) {
      const next = expectTokenResponse(await http.refresh(A, tokens.refresh_token));
      tokens = { ...tokens, ...next };
    }
    expect((await http.userinfo(tokens.access_token)).status).toBe(200);
  });
});

describe('scope on refresh (RFC 6749 §6: "MUST NOT include any scope not originally granted")', () => {
  it('narrows: the new token carries only the asked scope, and userinfo follows it', async () => {
    const { tokens } = await issueTokens(auth.rpc, http, { scope: 'profile:read seatime:read vessels:read' });
    const narrowed = expectTokenResponse(await http.refresh(A, tokens.refresh_token, 'seatime:read'));
    expect(scopeSet(narrowed.scope)).toEqual(['seatime:read']);
    const info = await http.userinfo(narrowed.access_token);
    expect(info.status).toBe(200);
    const body = info.json<Record<string, unknown>>();
    expect(body.sub).toBe('usr_sandbox_alex_morgan');
    expect(body).not.toHaveProperty('name');
  });

  it('widening after a narrowing → 400 invalid_scope', async () => {
    const { tokens } = await issueTokens(auth.rpc, http, { scope: 'profile:read seatime:read' });
    const narrowed = expectTokenResponse(await http.refresh(A, tokens.refresh_token, 'profile:read'));
    expectOAuthError(
      await http.refresh(A, narrowed.refresh_token, 'profile:read vessels:read'),
      400,
      'invalid_scope',
    );
  });

  it('the same scope in another order is not a widening', async () => {
    const { tokens } = await issueTokens(auth.rpc, http, { scope: 'profile:read seatime:read' });
    const next = expectTokenResponse(
      await http.refresh(A, tokens.refresh_token, 'seatime:read profile:read'),
    );
    expect(scopeSet(next.scope)).toEqual(['profile:read', 'seatime:read']);
  });

  it('a rejected widening revokes nothing: the current pair still works', async () => {
    const { tokens } = await issueTokens(auth.rpc, http, { scope: 'profile:read' });
    expectOAuthError(await http.refresh(A, tokens.refresh_token, 'vessels:read'), 400, 'invalid_scope');
    expect((await http.userinfo(tokens.access_token)).status).toBe(200);
  });
});

describe('the refresh race (docs/rules.md, OAuth; enforced in the database)', () => {
  it('20 concurrent refreshes with one token → exactly one 200, nineteen invalid_grant; the winner’s pair works', async () => {
    const { tokens } = await issueTokens(auth.rpc, http);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => http.refresh(A, tokens.refresh_token)),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    const losers = answers.filter((r) => r.status !== 200);
    expect(losers).toHaveLength(19);
    for (const loser of losers) expectOAuthError(loser, 400, 'invalid_grant');

    const winner = expectTokenResponse(answers.find((r) => r.status === 200)!);
    expect((await http.userinfo(winner.access_token)).status).toBe(200);
    expect((await http.userinfo(tokens.access_token)).status).toBe(401);
    // The winner's refresh token is live (rotating it once more proves it).
    const after = expectTokenResponse(await http.refresh(A, winner.refresh_token));
    expect((await http.userinfo(after.access_token)).status).toBe(200);
  });

  it('holds over several rounds', async () => {
    for (let round = 0; round < 5; round += 1) {
      const { tokens } = await issueTokens(auth.rpc, http);
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => http.refresh(A, tokens.refresh_token)),
      );
      expect(answers.filter((r) => r.status === 200)).toHaveLength(1);
      expect(answers.filter((r) => r.status === 400)).toHaveLength(7);
    }
  });
});

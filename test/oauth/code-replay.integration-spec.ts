import { partner, pkcePair } from '../support/factories';
import { useAuthServer } from '../support/starters/auth-server';
import { issueCode, expectOAuthError, expectTokenResponse } from '../support/oauth/flow';

/**
 * Authorization codes are single-use (RFC 6749 §4.1.2, §10.5): a second use is invalid_grant and
 * revokes the tokens issued from that code (docs/rules.md; RFC 9700 §4.5.3).
 */
jest.setTimeout(30_000);

const { auth, http } = useAuthServer();
const A = partner('sandbox-partner');

async function expectAccessDead(accessToken: string) {
  const res = await http.userinfo(accessToken);
  expect(res.status).toBe(401);
}

async function expectRefreshDead(refreshToken: string) {
  expectOAuthError(await http.refresh(A, refreshToken), 400, 'invalid_grant');
}

describe('code replay (RFC 6749 §4.1.2)', () => {
  it('the second exchange is invalid_grant AND the tokens of the first stop working', async () => {
    const issued = await issueCode(auth.rpc);
    const first = expectTokenResponse(
      await http.exchange(A, issued.code, issued.verifier, issued.redirectUri),
    );
    expect((await http.userinfo(first.access_token)).status).toBe(200);

    expectOAuthError(
      await http.exchange(A, issued.code, issued.verifier, issued.redirectUri),
      400,
      'invalid_grant',
    );

    await expectAccessDead(first.access_token);
    await expectRefreshDead(first.refresh_token);
  });

  it('a replay also revokes the pair already refreshed from that code’s tokens', async () => {
    const issued = await issueCode(auth.rpc);
    const first = expectTokenResponse(
      await http.exchange(A, issued.code, issued.verifier, issued.redirectUri),
    );
    const second = expectTokenResponse(await http.refresh(A, first.refresh_token));
    expect((await http.userinfo(second.access_token)).status).toBe(200);

    expectOAuthError(
      await http.exchange(A, issued.code, issued.verifier, issued.redirectUri),
      400,
      'invalid_grant',
    );

    await expectAccessDead(second.access_token);
    await expectRefreshDead(second.refresh_token);
  });

  it('a replay with a wrong verifier is still invalid_grant and still revokes', async () => {
    const issued = await issueCode(auth.rpc);
    const first = expectTokenResponse(
      await http.exchange(A, issued.code, issued.verifier, issued.redirectUri),
    );
    expectOAuthError(
      await http.exchange(A, issued.code, pkcePair().verifier, issued.redirectUri),
      400,
      'invalid_grant',
    );
    await expectAccessDead(first.access_token);
  });

  it('a replay does not touch the member’s other tokens with the same partner', async () => {
    const other = await issueCode(auth.rpc);
    const otherTokens = expectTokenResponse(
      await http.exchange(A, other.code, other.verifier, other.redirectUri),
    );
    const issued = await issueCode(auth.rpc);
    expectTokenResponse(await http.exchange(A, issued.code, issued.verifier, issued.redirectUri));
    expectOAuthError(
      await http.exchange(A, issued.code, issued.verifier, issued.redirectUri),
      400,
      'invalid_grant',
    );
    expect((await http.userinfo(otherTokens.access_token)).status).toBe(200);
  });

  it('10 concurrent exchanges of one code: exactly one 200, nine invalid_grant, and no token of it survives', async () => {
    const issued = await issueCode(auth.rpc);
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => http.exchange(A, issued.code, issued.verifier, issued.redirectUri)),
    );
    const winners = answers.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    for (const loser of answers.filter((r) => r.status !== 200))
      expectOAuthError(loser, 400, 'invalid_grant');
    // The nine others were replays of a used code, so what it issued is revoked (RFC 6749 §4.1.2).
    const tokens = expectTokenResponse(winners[0]);
    await expectAccessDead(tokens.access_token);
    await expectRefreshDead(tokens.refresh_token);
  });
});

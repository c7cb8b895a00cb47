import { partner, unknownToken } from '../support/factories';
import type { HttpResponse } from '../support/http';
import { useAuthServer } from '../support/starters/auth-server';
import { issueTokens, expectOAuthError, expectTokenResponse } from '../support/oauth/flow';

/**
 * POST /oauth/revoke (RFC 7009): any token of a family (the pairs of one code) revokes all of them (§2.1), the answer is always
 * 200 with an empty body (§2.2), and an unknown or foreign token is a no-op (docs/rules.md).
 */
jest.setTimeout(30_000);

const { auth, http } = useAuthServer();
const A = partner('sandbox-partner');
const B = partner('sandbox-partner-b');

function expectEmpty200(res: HttpResponse) {
  expect({ status: res.status, text: res.text }).toEqual({ status: 200, text: '' });
}

async function expectPairDead(p: typeof A, access: string, refresh: string) {
  expect((await http.userinfo(access)).status).toBe(401);
  expectOAuthError(await http.refresh(p, refresh), 400, 'invalid_grant');
}

describe('either token revokes both (RFC 7009 §2.1)', () => {
  it('revoking the access token revokes the refresh token', async () => {
    const { tokens } = await issueTokens(auth.rpc, http);
    expectEmpty200(await http.revokeToken(A, tokens.access_token));
    await expectPairDead(A, tokens.access_token, tokens.refresh_token);
  });

  it('revoking the refresh token revokes the access token', async () => {
    const { tokens } = await issueTokens(auth.rpc, http);
    expectEmpty200(await http.revokeToken(A, tokens.refresh_token));
    await expectPairDead(A, tokens.access_token, tokens.refresh_token);
  });

  it.each([
    ['access token with token_type_hint=refresh_token', 'access_token', 'refresh_token'],
    ['refresh token with token_type_hint=access_token', 'refresh_token', 'access_token'],
    ['access token with an unknown token_type_hint', 'access_token', 'id_token'],
  ] as const)('a wrong hint does not stop it: %s (RFC 7009 §2.1)', async (_what, which, hint) => {
    const { tokens } = await issueTokens(auth.rpc, http);
    const res = await http.revokeToken(A, tokens[which], hint);
    // RFC 7009 §2.2.1 allows unsupported_token_type for a hint it does not know; never a 5xx.
    if (res.status === 400) expectOAuthError(res, 400, 'unsupported_token_type');
    else expectEmpty200(res);
    if (res.status === 200) await expectPairDead(A, tokens.access_token, tokens.refresh_token);
  });

  it('over HTTP Basic client authentication too', async () => {
    const { tokens } = await issueTokens(auth.rpc, http);
    expectEmpty200(
      await http.revoke({ token: tokens.access_token }, { basic: [A.client_id, A.client_secret] }),
    );
    await expectPairDead(A, tokens.access_token, tokens.refresh_token);
  });

  it('revoking twice is still 200 with an empty body', async () => {
    const { tokens } = await issueTokens(auth.rpc, http);
    expectEmpty200(await http.revokeToken(A, tokens.access_token));
    expectEmpty200(await http.revokeToken(A, tokens.access_token));
    expectEmpty200(await http.revokeToken(A, tokens.refresh_token));
  });

  it('revokes only that pair: the member’s other pair with the same partner keeps working', async () => {
    const one = await issueTokens(auth.rpc, http);
    const two = await issueTokens(auth.rpc, http);
    expectEmpty200(await http.revokeToken(A, one.tokens.access_token));
    expect((await http.userinfo(two.tokens.access_token)).status).toBe(200);
  });

  it('a token rotated away then revoked ends its family: the new pair stops working too (RFC 9700 §4.14.2)', async () => {
    const { tokens } = await issueTokens(auth.rpc, http);
    const next = expectTokenResponse(await http.refresh(A, tokens.refresh_token));
    expectEmpty200(await http.revokeToken(A, tokens.refresh_token));
    await expectPairDead(A, next.access_token, next.refresh_token);
  });
});

describe('no-ops (RFC 7009 §2.2)', () => {
  it('an unknown token → 200, empty body', async () => {
    expectEmpty200(await http.revokeToken(A, unknownToken()));
  });

  it('another client’s token → 200, empty body, and the token still works', async () => {
    const { tokens } = await issueTokens(auth.rpc, http, { partner: A, scope: 'profile:read' });
    expectEmpty200(await http.revokeToken(B, tokens.access_token));
    expectEmpty200(await http.revokeToken(B, tokens.refresh_token));
    expect((await http.userinfo(tokens.access_token)).status).toBe(200);
    expectTokenResponse(await http.refresh(A, tokens.refresh_token));
  });

  it('a wrong client secret never revokes: the token still works (RFC 7009 §2.1 authenticates the client)', async () => {
    const { tokens } = await issueTokens(auth.rpc, http);
    const res = await http.revoke({
      token: tokens.access_token,
      client_id: A.client_id,
      client_secret: 'wrong',
    });
    // RFC 7009 §2.2.1 answers invalid_client (401); the interface's "always 200" is also met by
    // a 200 that does nothing. What must hold is that nothing was revoked.
    if (res.status === 401) expectOAuthError(res, 401, 'invalid_client');
    else expectEmpty200(res);
    expect((await http.userinfo(tokens.access_token)).status).toBe(200);
  });

  it('no client authentication never revokes: the token still works', async () => {
    const { tokens } = await issueTokens(auth.rpc, http);
    const res = await http.revoke({ token: tokens.access_token });
    if (res.status === 401) expectOAuthError(res, 401, 'invalid_client');
    else expectEmpty200(res);
    expect((await http.userinfo(tokens.access_token)).status).toBe(200);
  });
});

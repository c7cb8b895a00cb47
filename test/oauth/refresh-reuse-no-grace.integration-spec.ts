import { REFRESH_RACE_WINDOW_MS } from '../../apps/auth-server/src/tokens/tokens.service';
import { partner } from '../support/factories';
import { useAuthServer } from '../support/starters/auth-server';
import { issueTokens, expectOAuthError, expectTokenResponse } from '../support/oauth/flow';

/** REFRESH_TOKEN_REUSE_GRACE_SECONDS=0 disables the grace: the previous token is reuse too. */
jest.setTimeout(30_000);

const { auth, http } = useAuthServer({ REFRESH_TOKEN_REUSE_GRACE_SECONDS: '0' });
const A = partner('sandbox-partner');

it('the previous token presented again after the race window ends the family', async () => {
  const { tokens: a } = await issueTokens(auth.rpc, http);
  const b = expectTokenResponse(await http.refresh(A, a.refresh_token));
  await new Promise((r) => setTimeout(r, REFRESH_RACE_WINDOW_MS + 300));
  expectOAuthError(await http.refresh(A, a.refresh_token), 400, 'invalid_grant');
  expect((await http.userinfo(b.access_token)).status).toBe(401);
  expectOAuthError(await http.refresh(A, b.refresh_token), 400, 'invalid_grant');
});

it('within the race window it is a lost race even without grace: the new pair keeps working', async () => {
  const { tokens: a } = await issueTokens(auth.rpc, http);
  const b = expectTokenResponse(await http.refresh(A, a.refresh_token));
  expectOAuthError(await http.refresh(A, a.refresh_token), 400, 'invalid_grant');
  expect((await http.userinfo(b.access_token)).status).toBe(200);
});

import { partner } from '../support/factories';
import { useAuthServer } from '../support/starters/auth-server';
import { issueCode, expectOAuthError, expectTokenResponse } from '../support/oauth/flow';

/**
 * An authorization code lives AUTH_CODE_TTL_SECONDS (60 s in the interface; 1 s here) and then is
 * invalid_grant (RFC 6749 §4.1.2: "a maximum authorization code lifetime of 10 minutes is
 * RECOMMENDED"; docs/rules.md, Limits).
 */
jest.setTimeout(30_000);

const { auth, http } = useAuthServer({ AUTH_CODE_TTL_SECONDS: '1' });
const A = partner('sandbox-partner');

describe('code expiry (RFC 6749 §4.1.2)', () => {
  it('a code used within its lifetime is exchanged', async () => {
    const issued = await issueCode(auth.rpc);
    expectTokenResponse(await http.exchange(A, issued.code, issued.verifier, issued.redirectUri));
  });

  it('a code used after AUTH_CODE_TTL_SECONDS=1 has passed → 400 invalid_grant', async () => {
    const issued = await issueCode(auth.rpc);
    await new Promise((r) => setTimeout(r, 2200));
    expectOAuthError(
      await http.exchange(A, issued.code, issued.verifier, issued.redirectUri),
      400,
      'invalid_grant',
    );
  });
});

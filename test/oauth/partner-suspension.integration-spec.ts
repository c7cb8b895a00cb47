import { PartnerRegistrationError } from '../../apps/auth-server/src/partners/partners.service';
import { TokensService } from '../../apps/auth-server/src/tokens/tokens.service';
import { authorizeRequest, member } from '../support/factories';
import { startAuthServer, type AuthServerHarness } from '../support/starters/auth-server';
import { issueTokens, validate, expectOAuthError, OAuthHttp } from '../support/oauth/flow';
import { createPartner } from '../support/app-factories';

/**
 * An operator suspends a partner (`partners suspend`): every live token of the partner ends at
 * once, and it cannot authenticate until reinstated. Each test onboards a partner of its own, so
 * the sandbox partners other specs use are never suspended.
 */
jest.setTimeout(60_000);

let auth: AuthServerHarness;
let http: OAuthHttp;

beforeAll(async () => {
  auth = await startAuthServer();
  http = new OAuthHttp(auth.url);
}, 60_000);

afterAll(async () => {
  await auth?.close();
});

const setSuspended = (clientId: string, suspended: boolean) =>
  auth.app.get(TokensService).setPartnerSuspended(clientId, suspended);

describe('partner suspension', () => {
  it('revokes every live token of the partner, of every member, and refuses its client authentication', async () => {
    const p = await createPartner(auth, { label: 'suspension', scopes: ['profile:read'] });
    const alex = await issueTokens(auth.rpc, http, { partner: p });
    const sam = await issueTokens(auth.rpc, http, { partner: p, member: member('sam.lee@sandbox.test') });
    // Cached as active now: only the tombstone written with the revocation can end it below.
    expect((await http.userinfo(alex.tokens.access_token)).status).toBe(200);

    await expect(setSuspended(p.client_id, true)).resolves.toBe(2);

    for (const { tokens } of [alex, sam]) expect((await http.userinfo(tokens.access_token)).status).toBe(401);
    expectOAuthError(await http.refresh(p, alex.tokens.refresh_token), 401, 'invalid_client');
    const shown = await validate(auth.rpc, authorizeRequest({ partner: p }).params);
    expect(shown.outcome === 'redirect' && new URL(shown.redirect_to).searchParams.get('error')).toBe(
      'access_denied',
    );
  });

  it('reinstates without reviving the revoked tokens; new ones can be issued', async () => {
    const p = await createPartner(auth, { label: 'suspension', scopes: ['profile:read'] });
    const before = await issueTokens(auth.rpc, http, { partner: p });
    await setSuspended(p.client_id, true);

    await expect(setSuspended(p.client_id, false)).resolves.toBe(0);

    // Dead because it was revoked: its partner is no longer suspended.
    expect((await http.userinfo(before.tokens.access_token)).status).toBe(401);
    expectOAuthError(await http.refresh(p, before.tokens.refresh_token), 400, 'invalid_grant');
    const after = await issueTokens(auth.rpc, http, { partner: p });
    expect((await http.userinfo(after.tokens.access_token)).status).toBe(200);
  });

  it('refuses an unknown partner', async () => {
    await expect(setSuspended('no-such-partner', true)).rejects.toThrow(
      new PartnerRegistrationError('no partner no-such-partner'),
    );
  });
});

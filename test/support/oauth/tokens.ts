import type { SandboxMember, SandboxPartner } from '@svc/contracts';
import { partner as sandboxPartner } from '../factories';
import type { AuthServerHarness } from '../starters/auth-server';
import { issueTokens } from './flow';
import { OAuthHttp } from './oauth-http';

/**
 * An access token from the real auth-server, obtained as a partner obtains one: consent through
 * `auth.authorize.*` (as consent-ui asks), then the code exchanged at `/oauth/token` with PKCE.
 */
export async function accessToken(
  auth: AuthServerHarness,
  member: SandboxMember,
  options: { readonly partner?: SandboxPartner; readonly scope?: string } = {},
): Promise<string> {
  const partner = options.partner ?? sandboxPartner();
  const { tokens } = await issueTokens(auth.rpc, new OAuthHttp(auth.url), {
    partner,
    member,
    scope: options.scope ?? partner.scopes.join(' '),
  });
  return tokens.access_token;
}

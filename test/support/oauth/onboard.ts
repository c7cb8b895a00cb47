import { randomBytes } from 'node:crypto';
import type { SandboxPartner, Scope } from '@svc/contracts';
import { createPartner } from '../app-factories';
import type { AuthServerHarness } from '../starters/auth-server';

/**
 * A partner of the test's own, registered through auth-server's PartnersService as the admin CLI
 * registers one (client id `<label>-<random>`), so what the test does to it (suspend it, rotate its
 * secret, revoke its tokens) touches no other test's partner.
 */
export async function onboardPartner(
  auth: AuthServerHarness,
  label: string,
  scopes: Scope[] = ['profile:read', 'seatime:read'],
): Promise<SandboxPartner> {
  const name = `${label} test`;
  const redirectUris = [`https://${label}.example/cb`];
  const clientId = `${label}-${randomBytes(4).toString('hex')}`;
  const { clientSecret } = await createPartner(auth, { clientId, name, scopes, redirectUris });
  return {
    client_id: clientId,
    client_secret: clientSecret,
    name,
    scopes,
    redirect_uris: redirectUris,
    webhook: false,
    sponsorship: false,
    member_left: false,
    suspended: false,
  };
}

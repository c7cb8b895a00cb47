import { CONSENT_UI } from '../../../apps/consent-ui/src/app.definition';
import { MEMBER_PASSWORD, type MemberEmail } from '../factories';
import { bootApp, ISSUER, testAppEnv } from './app-process';
import type { AuthServerHarness } from './auth-server';
import { FormClient } from '../oauth/forms';

/**
 * consent-ui booted in-process (bootApp), next to an in-process auth-server (it reaches
 * auth-server over RPC). PUBLIC_BASE_URL is the same issuer as auth-server's: in production both
 * sit behind one gateway origin.
 */
export async function startConsentUi(auth: AuthServerHarness, env: Readonly<Record<string, string>> = {}) {
  const { url, close } = await bootApp(CONSENT_UI, testAppEnv('consent-ui', auth.services, env));
  const client = () => new FormClient(url, [new URL(ISSUER).origin]);
  return {
    url,
    close,
    client,
    /** A browser-like client signed in as `email` through the real /login form. */
    async signIn(email: MemberEmail) {
      const browser = client();
      const page = await browser.fetch('/login');
      if (page.status !== 200) throw new Error(`GET /login answered ${page.status}`);
      const posted = await browser.submit(await page.text(), 'Sign in', {
        Email: email,
        Password: MEMBER_PASSWORD,
      });
      if (posted.status !== 303 && posted.status !== 302) {
        throw new Error(`signing in answered ${posted.status}: ${(await posted.text()).slice(0, 500)}`);
      }
      return browser;
    },
  };
}

export type ConsentUiHarness = Awaited<ReturnType<typeof startConsentUi>>;

import { authorizeRequest, basicAuthorization, member, MEMBER_PASSWORD, partner } from '../factories';
import { FormClient } from './forms';

export interface TokenPair {
  readonly access_token: string;
  readonly refresh_token: string;
}

/**
 * Token pairs of alex.morgan for sandbox-partner, each from its own authorization code flow with
 * PKCE through the gateway, as a partner gets them: the member signs in once in a browser-like
 * client, then every pair is an authorization request, Allow on the consent screen, and the code
 * exchanged at /oauth/token.
 */
export async function obtainTokenPairs(
  baseUrl: string,
  publicOrigin: string,
  count: number,
): Promise<TokenPair[]> {
  const p = partner('sandbox-partner');
  const alex = member('alex.morgan@sandbox.test');
  const browser = new FormClient(baseUrl, [publicOrigin]);
  const pairs: TokenPair[] = [];
  let signedIn = false;
  for (let i = 0; i < count; i++) {
    const req = authorizeRequest({ partner: p, scope: 'profile:read seatime:read vessels:read' });
    const query = new URLSearchParams(req.params).toString();
    let page = await browser.follow(await browser.fetch(`/oauth/authorize?${query}`));
    if (!signedIn) {
      if (new URL(page.url).pathname !== '/login')
        throw new Error(`expected the sign-in page, got ${page.url}`);
      const html = await page.res.text();
      const res = await browser.submit(html, 'Sign in', { Email: alex.email, Password: MEMBER_PASSWORD });
      if (res.status !== 302 && res.status !== 303) throw new Error(`sign-in answered ${res.status}`);
      page = await browser.follow(res);
      signedIn = true;
    }
    if (page.res.status !== 200) throw new Error(`consent page answered ${page.res.status}`);
    const allowed = await browser.submit(await page.res.text(), 'Allow');
    const location = allowed.headers.get('location');
    if (!location) throw new Error(`Allow answered ${allowed.status} without a redirect`);
    const code = new URL(location).searchParams.get('code');
    if (!code) throw new Error(`no code in ${location}`);
    const token = await fetch(`${baseUrl}/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basicAuthorization(p.client_id, p.client_secret),
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: req.redirectUri,
        code_verifier: req.pkce.verifier,
      }).toString(),
    });
    if (token.status !== 200)
      throw new Error(`token exchange answered ${token.status}: ${await token.text()}`);
    pairs.push((await token.json()) as TokenPair);
  }
  return pairs;
}

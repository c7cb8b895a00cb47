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
  const browser = new FormClient(baseUrl, [publicOrigin]);
  const pairs: TokenPair[] = [];
  for (let i = 0; i < count; i++) {
    const req = authorizeRequest({ partner: p, scope: 'profile:read seatime:read vessels:read' });
    const signIn = i === 0 ? member('alex.morgan@sandbox.test').email : undefined;
    const code = await allow(browser, await consentPage(browser, req.params, signIn));
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

/**
 * `browser` through an authorization request (`params`) to the consent screen, signing in as
 * `email` on the sign-in page it leads to first (none: the browser is signed in already): the
 * consent page's HTML.
 */
export async function consentPage(
  browser: FormClient,
  params: Record<string, string>,
  email?: string,
): Promise<string> {
  let page = await browser.follow(await browser.fetch(`/oauth/authorize?${new URLSearchParams(params)}`));
  if (email !== undefined) {
    if (new URL(page.url).pathname !== '/login')
      throw new Error(`expected the sign-in page, got ${page.url}`);
    const res = await browser.submit(await page.res.text(), 'Sign in', {
      Email: email,
      Password: MEMBER_PASSWORD,
    });
    if (res.status !== 302 && res.status !== 303) throw new Error(`sign-in answered ${res.status}`);
    page = await browser.follow(res);
  }
  if (page.res.status !== 200) throw new Error(`consent page answered ${page.res.status}`);
  return page.res.text();
}

/** Allow on a consent page: the authorization code of the redirect. */
export async function allow(browser: FormClient, consentHtml: string): Promise<string> {
  const allowed = await browser.submit(consentHtml, 'Allow');
  const location = allowed.headers.get('location');
  if (!location) throw new Error(`Allow answered ${allowed.status} without a redirect`);
  const code = new URL(location).searchParams.get('code');
  if (!code) throw new Error(`no code in ${location}`);
  return code;
}

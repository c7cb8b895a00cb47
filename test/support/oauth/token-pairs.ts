import { authorizeRequest, member, MEMBER_PASSWORD, partner } from '../factories';
import { request } from '../http';
import { FormClient } from './forms';

export interface TokenPair {
  readonly access_token: string;
  readonly refresh_token: string;
}

/** The client a token is asked for: sandbox-partner unless a test registered its own. */
export interface OAuthClient {
  readonly client_id: string;
  readonly client_secret: string;
  readonly redirect_uri: string;
}

const SANDBOX = partner('sandbox-partner');
export const SANDBOX_CLIENT: OAuthClient = { ...SANDBOX, redirect_uri: SANDBOX.redirect_uris[0] };

/**
 * A token pair of `client` as a partner gets one, through `browser`: an authorization request with
 * PKCE, Allow on the consent screen (signing in as `email` first; none: the browser is signed in
 * already), and the code exchanged at /oauth/token.
 */
export async function tokenPair(
  browser: FormClient,
  options: { client?: OAuthClient; scope?: string; email?: string } = {},
): Promise<TokenPair> {
  const { client = SANDBOX_CLIENT, scope = 'profile:read seatime:read vessels:read' } = options;
  const req = authorizeRequest({
    scope,
    redirectUri: client.redirect_uri,
    overrides: { client_id: client.client_id },
  });
  const code = await allow(browser, await consentPage(browser, req.params, options.email));
  const res = await request(`${browser.baseUrl}/oauth/token`, {
    method: 'POST',
    form: {
      grant_type: 'authorization_code',
      code,
      redirect_uri: client.redirect_uri,
      code_verifier: req.pkce.verifier,
      client_id: client.client_id,
      client_secret: client.client_secret,
    },
    timeoutMs: 30_000,
  });
  if (res.status !== 200) throw new Error(`code exchange answered ${res.status}: ${res.text}`);
  return res.json<TokenPair>();
}

/** `count` token pairs of alex.morgan for sandbox-partner through the gateway, who signs in once. */
export async function obtainTokenPairs(
  baseUrl: string,
  publicOrigin: string,
  count: number,
): Promise<TokenPair[]> {
  const browser = new FormClient(baseUrl, [publicOrigin]);
  const pairs: TokenPair[] = [];
  for (let i = 0; i < count; i++) {
    pairs.push(
      await tokenPair(browser, { email: i === 0 ? member('alex.morgan@sandbox.test').email : undefined }),
    );
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

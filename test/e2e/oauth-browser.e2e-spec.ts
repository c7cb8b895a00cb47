import { SCOPE_DESCRIPTIONS, type Scope } from '@svc/contracts';
import type { Page, Response as PageResponse } from 'playwright-core';
import { member, MEMBER_PASSWORD, partner } from '../support/factories';
import { launchBrowser, type Browser } from '../support/browser';
import type * as Oauth4webapi from 'oauth4webapi';
import { startSystem, type RunningSystem } from '../support/system';

/**
 * The code flow as a partner and a crew member live it: the whole system behind the gateway,
 * Debian's Chromium on the real consent UI, and oauth4webapi as the partner's independent
 * client (discovery, PKCE S256, state, RFC 9207 iss, code exchange, userinfo, refresh, revoke).
 */
jest.setTimeout(120_000);

// oauth4webapi is ES modules only: loaded with Node's own `require` (require(esm)), not Jest's
// CommonJS registry, so it runs with Node's own globals, exactly as a partner's server would.
const oauth = process.getBuiltinModule('node:module').createRequire(__filename)(
  'oauth4webapi',
) as typeof Oauth4webapi;
const A = partner('sandbox-partner');
const alex = member('alex.morgan@sandbox.test');
const REDIRECT_URI = 'http://localhost:8765/callback';
const insecure = { [oauth.allowInsecureRequests]: true } as const;
/** A name that is Sandbox Partner's own, not "Sandbox Partner B" or "Sandbox Partner (suspended)". */
const PARTNER_A_NAME = /Sandbox Partner(?! B| \()/;

let system: RunningSystem;
let browser: Browser;
let as: Oauth4webapi.AuthorizationServer;
const client: Oauth4webapi.Client = { client_id: A.client_id };
const clientAuth = oauth.ClientSecretPost(A.client_secret);

beforeAll(async () => {
  system = await startSystem({ label: 'oauth-browser' });
  browser = await launchBrowser();
  // The issuer is PUBLIC_BASE_URL, the gateway (RFC 8414 §3: metadata at the well-known URI).
  const issuer = new URL(`http://localhost:${system.gatewayPort}`);
  as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
  );
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await system?.stop();
}, 60_000);

interface Authorization {
  readonly page: Page;
  readonly state: string;
  readonly verifier: string;
  readonly consent: PageResponse;
}

/** Opens the authorization URL in a new tab, signs in when asked, and stops at the consent screen. */
async function openConsent(scopes: readonly Scope[]): Promise<Authorization> {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: A.client_id,
    redirect_uri: REDIRECT_URI,
    scope: scopes.join(' '),
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  }).toString();

  const page = await browser.context.newPage();
  // Nothing listens on the partner's callback: the browser's request to it is all we need.
  await page.route('http://localhost:8765/**', (route) => route.abort());
  let consent = await page.goto(url.toString());
  if (new URL(page.url()).pathname === '/login') {
    // Not signed in: the dashboard's sign-in, then back to the request (docs/rules.md, Authentication).
    expect(new URL(page.url()).searchParams.get('return_to')).toMatch(/^\/oauth\/authorize\?/);
    const back = page.waitForResponse(
      (r) =>
        new URL(r.url()).pathname === '/oauth/authorize' &&
        r.request().method() === 'GET' &&
        r.status() === 200,
    );
    await page.getByLabel('Email').fill(alex.email);
    await page.getByLabel('Password').fill(MEMBER_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    consent = await back;
  }
  if (!consent) throw new Error('no consent page');
  expect(consent.status()).toBe(200);
  expect(new URL(page.url()).pathname).toBe('/oauth/authorize');
  return { page, state, verifier, consent };
}

/** Clicks a decision and returns the URL the browser was sent to (the partner's callback). */
async function decide(page: Page, button: 'Allow' | 'Deny'): Promise<URL> {
  const callback = page.waitForRequest((r) => r.url().startsWith(REDIRECT_URI));
  await page.getByRole('button', { name: button }).click();
  return new URL((await callback).url());
}

async function exchange(auth: Authorization, callback: URL) {
  const params = oauth.validateAuthResponse(as, client, callback, auth.state);
  const response = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    clientAuth,
    params,
    REDIRECT_URI,
    auth.verifier,
    insecure,
  );
  return oauth.processAuthorizationCodeResponse(as, client, response);
}

async function userinfoStatus(accessToken: string): Promise<number> {
  const res = await fetch(as.userinfo_endpoint!, { headers: { authorization: `Bearer ${accessToken}` } });
  return res.status;
}

async function refreshStatus(refreshToken: string): Promise<{ status: number; error?: string }> {
  const res = await oauth.refreshTokenGrantRequest(as, client, clientAuth, refreshToken, insecure);
  const body = (await res.json()) as { error?: string };
  return { status: res.status, error: body.error };
}

describe('discovery (RFC 8414)', () => {
  it('oauth4webapi accepts the metadata: S256, iss parameter, every endpoint on the gateway', () => {
    expect(as.issuer).toBe(`http://localhost:${system.gatewayPort}`);
    expect(as.code_challenge_methods_supported).toEqual(['S256']);
    expect(as.authorization_response_iss_parameter_supported).toBe(true);
    for (const endpoint of [
      'authorization_endpoint',
      'token_endpoint',
      'revocation_endpoint',
      'userinfo_endpoint',
    ] as const) {
      expect(new URL(as[endpoint]!).origin).toBe(as.issuer);
    }
  });
});

describe('sign-in → consent → code → tokens → userinfo → refresh → revoke', () => {
  it('runs end to end with oauth4webapi', async () => {
    const scopes: Scope[] = ['profile:read', 'seatime:read'];
    const auth = await openConsent(scopes);
    try {
      await expect(auth.page.getByText(PARTNER_A_NAME).first().isVisible()).resolves.toBe(true);
      for (const scope of scopes) {
        await expect(auth.page.getByText(SCOPE_DESCRIPTIONS[scope]).isVisible()).resolves.toBe(true);
      }
      await expect(auth.page.getByText(SCOPE_DESCRIPTIONS['vessels:read']).count()).resolves.toBe(0);
      await expect(auth.page.getByRole('button', { name: 'Deny' }).isVisible()).resolves.toBe(true);

      const callback = await decide(auth.page, 'Allow');
      // RFC 9207: iss is the issuer; the state comes back unchanged (validateAuthResponse checks both).
      expect(callback.searchParams.get('iss')).toBe(as.issuer);
      expect(callback.searchParams.get('state')).toBe(auth.state);
      const tokens = await exchange(auth, callback);
      expect(tokens.token_type).toBe('bearer'); // oauth4webapi lower-cases it
      expect(tokens.expires_in).toBe(3600);
      expect(tokens.scope?.split(' ').sort()).toEqual([...scopes].sort());
      expect(typeof tokens.refresh_token).toBe('string');

      const info = await oauth.processUserInfoResponse(
        as,
        client,
        alex.user_id,
        await oauth.userInfoRequest(as, client, tokens.access_token, insecure),
      );
      expect(info.sub).toBe(alex.user_id);
      expect(info.name).toBe(alex.name);

      const refreshed = await oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token!, insecure),
      );
      expect(refreshed.access_token).not.toBe(tokens.access_token);
      expect(await userinfoStatus(tokens.access_token)).toBe(401);
      expect(await userinfoStatus(refreshed.access_token)).toBe(200);

      await oauth.processRevocationResponse(
        await oauth.revocationRequest(as, client, clientAuth, refreshed.access_token, insecure),
      );
      expect(await userinfoStatus(refreshed.access_token)).toBe(401);
      // Revoking the access token revoked its refresh token too (RFC 7009 §2.1).
      await expect(refreshStatus(refreshed.refresh_token!)).resolves.toEqual({
        status: 400,
        error: 'invalid_grant',
      });
    } finally {
      await auth.page.close();
    }
  });

  it('the code cannot be exchanged twice (RFC 6749 §4.1.2)', async () => {
    const auth = await openConsent(['profile:read']);
    try {
      const callback = await decide(auth.page, 'Allow');
      const tokens = await exchange(auth, callback);
      await expect(exchange(auth, callback)).rejects.toMatchObject({ error: 'invalid_grant' });
      expect(await userinfoStatus(tokens.access_token)).toBe(401);
    } finally {
      await auth.page.close();
    }
  });
});

describe('Deny', () => {
  it('sends the browser back with error=access_denied, the state and iss, and no code', async () => {
    const auth = await openConsent(['vessels:read']);
    try {
      const callback = await decide(auth.page, 'Deny');
      expect(callback.searchParams.get('error')).toBe('access_denied');
      expect(callback.searchParams.get('state')).toBe(auth.state);
      expect(callback.searchParams.get('iss')).toBe(as.issuer);
      expect(callback.searchParams.has('code')).toBe(false);
      let thrown: unknown;
      try {
        oauth.validateAuthResponse(as, client, callback, auth.state);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(oauth.AuthorizationResponseError);
      expect((thrown as Oauth4webapi.AuthorizationResponseError).error).toBe('access_denied');
    } finally {
      await auth.page.close();
    }
  });
});

describe('the consent screen', () => {
  it("cannot be framed: frame-ancestors 'none' and X-Frame-Options: DENY", async () => {
    const auth = await openConsent(['profile:read']);
    try {
      const headers = await auth.consent.allHeaders();
      expect(headers['content-security-policy']).toMatch(/frame-ancestors\s+'none'/);
      expect(headers['x-frame-options']).toBe('DENY');
    } finally {
      await auth.page.close();
    }
  });

  it('keeps the session in an HttpOnly, SameSite=Lax cookie', async () => {
    const auth = await openConsent(['profile:read']);
    try {
      const cookies = await browser.context.cookies(as.issuer);
      expect(cookies.length).toBeGreaterThan(0);
      for (const cookie of cookies)
        expect({ name: cookie.name, httpOnly: cookie.httpOnly }).toEqual({
          name: cookie.name,
          httpOnly: true,
        });
      expect(cookies.some((c) => c.sameSite === 'Lax')).toBe(true);
    } finally {
      await auth.page.close();
    }
  });
});

describe('connected partners', () => {
  it('lists the partner, and "Disconnect" removes it and its tokens stop working at once', async () => {
    const auth = await openConsent(['profile:read', 'vessels:read']);
    let tokens: Oauth4webapi.TokenEndpointResponse;
    try {
      tokens = await exchange(auth, await decide(auth.page, 'Allow'));
    } finally {
      await auth.page.close();
    }
    expect(await userinfoStatus(tokens.access_token)).toBe(200);

    const page = await browser.context.newPage();
    try {
      await page.goto(`${as.issuer}/account/connections`);
      const entry = page
        .locator('li, tr, article, section, div')
        .filter({ hasText: PARTNER_A_NAME })
        .filter({ has: page.getByRole('button', { name: 'Disconnect' }) })
        .last();
      await expect(entry.isVisible()).resolves.toBe(true);
      await expect(
        entry.getByText(SCOPE_DESCRIPTIONS['vessels:read']).or(entry.getByText('vessels:read')).count(),
      ).resolves.toBeGreaterThan(0);

      const posted = page.waitForResponse((r) => r.request().method() === 'POST');
      await entry.getByRole('button', { name: 'Disconnect' }).click();
      expect((await posted).status()).toBeLessThan(400);
      await page.waitForLoadState('load');
      await page.goto(`${as.issuer}/account/connections`);
      // No connection card any more (the partner may still be named under Sponsorships: it pays
      // for this member's seat whether or not they are connected).
      await expect(page.getByRole('heading', { name: PARTNER_A_NAME, exact: true }).count()).resolves.toBe(0);
    } finally {
      await page.close();
    }
    expect(await userinfoStatus(tokens.access_token)).toBe(401);
    await expect(refreshStatus(tokens.refresh_token!)).resolves.toEqual({
      status: 400,
      error: 'invalid_grant',
    });
  });
});

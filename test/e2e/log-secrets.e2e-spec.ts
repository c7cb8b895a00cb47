import fs from 'node:fs';
import path from 'node:path';
import {
  basicAuthorization,
  member,
  MEMBER_PASSWORD,
  partner,
  pkcePair,
  randomState,
} from '../support/factories';
import { FormClient, parseForms, submission } from '../support/oauth/forms';
import { startSystem, type RunningSystem } from '../support/system';

/**
 * No secret in any log line (issue 3, item 8; house style: a redact list for credentials): a
 * full flow through the gateway, by hand (the login form, the consent form, the token,
 * userinfo, refresh, revocation and disconnect endpoints), then every file the harness captured
 * under .run/ for this system is searched for every secret value the flow handled.
 */
jest.setTimeout(120_000);

const A = partner('sandbox-partner');
const sam = member('sam.lee@sandbox.test');
const REDIRECT_URI = A.redirect_uris[0];

let system: RunningSystem;

beforeAll(async () => {
  system = await startSystem({ label: 'log-secrets', env: { LOG_LEVEL: 'debug' } });
}, 240_000);

afterAll(async () => {
  await system?.stop();
}, 60_000);

/** Every regular file under `dir`, except nginx's scratch folders. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'temp') out.push(...filesUnder(full));
    } else if (entry.isFile()) out.push(full);
  }
  return out;
}

describe('logs of a full OAuth flow', () => {
  it('hold no token, code, verifier, client secret, password or session cookie value', async () => {
    const secrets = new Map<string, string>(); // value → what it is
    const keep = (what: string, value: string | null | undefined) => {
      if (value && value.length >= 8) secrets.set(value, what);
    };
    const publicOrigin = `http://localhost:${system.gatewayPort}`;
    const browser = new FormClient(system.baseUrl, [publicOrigin]);
    const json = async (res: Response) => (await res.json()) as Record<string, string>;
    const tokenCall = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(`${system.baseUrl}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(fields).toString(),
      });

    // A failed sign-in first: a wrong password must not be logged either.
    const wrongPassword = `${MEMBER_PASSWORD}-not-this-one`;
    keep('password', MEMBER_PASSWORD);
    keep('rejected password', wrongPassword);
    const loginPage = await browser.fetch('/login');
    expect(loginPage.status).toBe(200);
    const refused = await browser.submit(await loginPage.text(), 'Sign in', {
      Email: sam.email,
      Password: wrongPassword,
    });
    expect(refused.status).toBe(401);

    // The authorization request, the sign-in it leads to, the consent screen and Allow.
    const pkce = pkcePair();
    keep('code_verifier', pkce.verifier);
    const state = randomState();
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: A.client_id,
      redirect_uri: REDIRECT_URI,
      scope: 'profile:read seatime:read',
      state,
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
    });
    const toLogin = await browser.follow(await browser.fetch(`/oauth/authorize?${query.toString()}`));
    expect(new URL(toLogin.url).pathname).toBe('/login');
    const login = await toLogin.res.text();
    for (const form of parseForms(login))
      for (const input of form.inputs) if (input.name === 'csrf') keep('CSRF token', input.value);
    const signedIn = await browser.submit(login, 'Sign in', { Email: sam.email, Password: MEMBER_PASSWORD });
    expect([302, 303]).toContain(signedIn.status);
    const consent = await browser.follow(signedIn);
    expect(consent.res.status).toBe(200);
    const consentHtml = await consent.res.text();
    for (const form of parseForms(consentHtml))
      for (const input of form.inputs) if (input.name === 'csrf') keep('CSRF token', input.value);
    const allowed = await browser.submit(consentHtml, 'Allow');
    expect([302, 303]).toContain(allowed.status);
    const callback = new URL(allowed.headers.get('location') ?? '');
    expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT_URI);
    const code = callback.searchParams.get('code');
    keep('authorization code', code);
    expect(code).toBeTruthy();

    // Exchange (client_secret_post), replay, a wrong secret, userinfo, refresh (Basic), revoke.
    keep('client_secret', A.client_secret);
    const exchange = {
      grant_type: 'authorization_code',
      code: code!,
      redirect_uri: REDIRECT_URI,
      code_verifier: pkce.verifier,
      client_id: A.client_id,
      client_secret: A.client_secret,
    };
    const first = await tokenCall(exchange);
    expect(first.status).toBe(200);
    const tokens = await json(first);
    keep('access token', tokens.access_token);
    keep('refresh token', tokens.refresh_token);
    const wrongSecret = 'not-the-sandbox-secret-at-all';
    keep('rejected client_secret', wrongSecret);
    expect((await tokenCall({ ...exchange, client_secret: wrongSecret })).status).toBe(401);
    expect((await tokenCall(exchange)).status).toBe(400); // replay: revokes the first pair

    const second = await (async () => {
      const pair = pkcePair();
      keep('code_verifier', pair.verifier);
      const q = new URLSearchParams({
        ...Object.fromEntries(query),
        code_challenge: pair.challenge,
        state: randomState(),
      });
      const page = await browser.fetch(`/oauth/authorize?${q.toString()}`);
      expect(page.status).toBe(200);
      const html = await page.text();
      const allow = await browser.submit(html, 'Allow');
      const c = new URL(allow.headers.get('location') ?? '').searchParams.get('code');
      keep('authorization code', c);
      const res = await tokenCall({ ...exchange, code: c!, code_verifier: pair.verifier });
      expect(res.status).toBe(200);
      return json(res);
    })();
    keep('access token', second.access_token);
    keep('refresh token', second.refresh_token);

    const info = await fetch(`${system.baseUrl}/oauth/userinfo`, {
      headers: { authorization: `Bearer ${second.access_token}` },
    });
    expect(info.status).toBe(200);
    const refreshed = await tokenCall(
      { grant_type: 'refresh_token', refresh_token: second.refresh_token },
      { authorization: basicAuthorization(A.client_id, A.client_secret) },
    );
    expect(refreshed.status).toBe(200);
    const third = await json(refreshed);
    keep('access token', third.access_token);
    keep('refresh token', third.refresh_token);
    const revoked = await fetch(`${system.baseUrl}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        token: third.refresh_token,
        client_id: A.client_id,
        client_secret: A.client_secret,
      }).toString(),
    });
    expect(revoked.status).toBe(200);
    expect(
      (
        await fetch(`${system.baseUrl}/oauth/userinfo`, {
          headers: { authorization: `Bearer ${third.access_token}` },
        })
      ).status,
    ).toBe(401);

    // One more pair, then the member disconnects the partner in the dashboard.
    const fourthPair = pkcePair();
    keep('code_verifier', fourthPair.verifier);
    const q4 = new URLSearchParams({ ...Object.fromEntries(query), code_challenge: fourthPair.challenge });
    const allow4 = await browser.submit(
      await (await browser.fetch(`/oauth/authorize?${q4.toString()}`)).text(),
      'Allow',
    );
    const code4 = new URL(allow4.headers.get('location') ?? '').searchParams.get('code');
    keep('authorization code', code4);
    const fourth = await json(
      await tokenCall({ ...exchange, code: code4!, code_verifier: fourthPair.verifier }),
    );
    keep('access token', fourth.access_token);
    keep('refresh token', fourth.refresh_token);
    const connections = await browser.fetch('/account/connections');
    expect(connections.status).toBe(200);
    // The e2e suites share one sandbox: sam may be connected to other partners too.
    const disconnect = parseForms(await connections.text()).find((f) =>
      f.action.endsWith(`/${encodeURIComponent(A.client_id)}/disconnect`),
    );
    const disconnected = await browser.fetch(disconnect!.action, {
      method: 'POST',
      body: submission(disconnect!, {}, 'Disconnect'),
    });
    expect(disconnected.status).toBeLessThan(400);
    expect(
      (
        await fetch(`${system.baseUrl}/oauth/userinfo`, {
          headers: { authorization: `Bearer ${fourth.access_token}` },
        })
      ).status,
    ).toBe(401);

    for (const value of browser.seenCookieValues) keep('session cookie value', value);
    expect([...secrets.values()]).toEqual(
      expect.arrayContaining(['access token', 'refresh token', 'session cookie value']),
    );

    // Give every process a moment to write its last lines, then read everything it wrote.
    await new Promise((r) => setTimeout(r, 1000));
    const files = filesUnder(system.logDir);
    expect(files.some((f) => f.endsWith('auth-server.log'))).toBe(true);
    expect(files.some((f) => f.endsWith('consent-ui.log'))).toBe(true);
    expect(files.some((f) => f.endsWith('gateway.log'))).toBe(true);
    const leaks: string[] = [];
    let lines = 0;
    for (const file of files) {
      const text = fs.readFileSync(file, 'utf8');
      text.split('\n').forEach((line, i) => {
        lines += 1;
        for (const [value, what] of secrets) {
          if (line.includes(value) || line.includes(encodeURIComponent(value))) {
            leaks.push(`${path.relative(system.logDir, file)}:${i + 1}: ${what}`);
          }
        }
      });
    }
    // The flow was logged at all (the search looked at real lines, at debug level).
    expect(lines).toBeGreaterThan(50);
    expect(leaks).toEqual([]);
  });
});

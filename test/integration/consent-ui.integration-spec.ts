import { createHash, randomBytes } from 'node:crypto';
import { SANDBOX_PASSWORD, SCOPE_DESCRIPTIONS } from '@svc/contracts';
import { Client } from 'pg';
import { testServices } from '../support/services';
import { ISSUER } from '../support/starters/app-process';
import { startAuthServer, type AuthServerHarness } from '../support/starters/auth-server';
import { startConsentUi, type ConsentUiHarness } from '../support/starters/consent-ui';

/**
 * consent-ui against the real auth-server (its app definition, booted in-process, answering the
 * auth.* RPCs over this run's RabbitMQ vhost) and the real PostgreSQL: what a crew member does in
 * a browser, request by request, with a cookie jar.
 */
const services = testServices();
const PARTNER = { clientId: 'sandbox-partner', secret: 'sandbox-secret', name: 'Sandbox Partner' };
const REDIRECT_URI = 'http://localhost:8765/callback';
const ALEX = 'alex.morgan@sandbox.test';

let auth: AuthServerHarness | undefined;
let authServerUrl: string;
let consentUi: ConsentUiHarness;
let baseUrl: string;
let db: Client;

/** A browser as far as these pages care: a cookie jar, no redirects followed, form posts. */
class Browser {
  readonly cookies = new Map<string, string>();
  readonly setCookieLines: string[] = [];

  async get(path: string): Promise<Page> {
    return this.request('GET', path);
  }

  async post(path: string, fields: Record<string, string>): Promise<Page> {
    return this.request('POST', path, new URLSearchParams(fields).toString());
  }

  private async request(method: string, path: string, body?: string): Promise<Page> {
    const headers: Record<string, string> = {};
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await fetch(new URL(path, baseUrl), { method, headers, body, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      this.setCookieLines.push(line);
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      if (value === '' || /Max-Age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { status: response.status, headers: response.headers, body: await response.text() };
  }
}

interface Page {
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
}

function decode(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** The hidden fields of the form that holds the button `buttonText`. */
function formFields(body: string, buttonText: string): { action: string; fields: Record<string, string> } {
  for (const match of body.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)) {
    if (!new RegExp(`>\\s*${buttonText}\\s*</button>`).test(match[2])) continue;
    const fields: Record<string, string> = {};
    for (const input of match[2].matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)"/g)) {
      fields[decode(input[1])] = decode(input[2]);
    }
    return { action: decode(/action="([^"]*)"/.exec(match[1])![1]), fields };
  }
  throw new Error(`no form with a "${buttonText}" button in ${body.slice(0, 1500)}`);
}

async function signIn(browser: Browser, returnTo?: string, password = SANDBOX_PASSWORD): Promise<Page> {
  const form = await browser.get(returnTo ? `/login?return_to=${encodeURIComponent(returnTo)}` : '/login');
  expect(form.status).toBe(200);
  const { action, fields } = formFields(form.body, 'Sign in');
  return browser.post(action, { ...fields, email: ALEX, password });
}

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

function authorizePath(overrides: Record<string, string> = {}) {
  const { verifier, challenge } = pkce();
  const state = randomBytes(12).toString('base64url');
  const params = {
    response_type: 'code',
    client_id: PARTNER.clientId,
    redirect_uri: REDIRECT_URI,
    scope: 'profile:read seatime:read vessels:read',
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...overrides,
  };
  return { path: `/oauth/authorize?${new URLSearchParams(params).toString()}`, state, verifier };
}

beforeAll(async () => {
  db = new Client({ connectionString: services.databaseUrl });
  await db.connect();
  auth = await startAuthServer();
  authServerUrl = auth.url.replace('[::1]', '127.0.0.1');
  // A short RPC budget, so the "auth-server is down" page comes quickly.
  consentUi = await startConsentUi(auth, { RPC_TIMEOUT_MS: '3000' });
  baseUrl = consentUi.url;
});

afterAll(async () => {
  await consentUi?.close();
  await auth?.close();
  await db?.end();
});

describe('signing in', () => {
  it('sets an HttpOnly, SameSite=Lax session cookie (no Secure over http://localhost) and stores only its digest', async () => {
    const browser = new Browser();
    const response = await signIn(browser);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/account/connections');
    const line = browser.setCookieLines.find(
      (l) => l.startsWith('svc_session=') && !l.startsWith('svc_session=;'),
    );
    expect(line).toMatch(/^svc_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=43200; HttpOnly; SameSite=Lax$/);
    const sessionId = browser.cookies.get('svc_session')!;
    const digest = createHash('sha256').update(sessionId).digest('hex');
    const { rows } = await db.query<{
      id_digest: string;
      user_id: string;
      expires_at: Date;
      created_at: Date;
    }>('SELECT id_digest, user_id, created_at, expires_at FROM consent.sessions WHERE id_digest = $1', [
      digest,
    ]);
    expect(rows).toHaveLength(1);
    expect(rows[0].user_id).toMatch(/^usr_/);
    expect(rows[0].expires_at.getTime() - rows[0].created_at.getTime()).toBe(12 * 3600 * 1000);
    const { rows: leaked } = await db.query('SELECT 1 FROM consent.sessions WHERE id_digest = $1', [
      sessionId,
    ]);
    expect(leaked).toHaveLength(0);
  });

  it('answers a wrong password with 401 and the neutral message', async () => {
    const response = await signIn(new Browser(), undefined, 'not-the-password');
    expect(response.status).toBe(401);
    expect(response.body).toContain('Email or password is incorrect.');
  });
});

describe('the consent screen', () => {
  it('sends a browser without a session to sign in and back to the very same request', async () => {
    const browser = new Browser();
    const { path } = authorizePath();
    const first = await browser.get(path);
    expect(first.status).toBe(302);
    expect(first.headers.get('location')).toBe(`/login?return_to=${encodeURIComponent(path)}`);
    const signedIn = await signIn(browser, path);
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('location')).toBe(path);
  });

  it('names the partner and each scope in plain words, with Allow and Deny, and cannot be framed', async () => {
    const browser = new Browser();
    await signIn(browser);
    const page = await browser.get(authorizePath().path);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(
      "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; frame-ancestors 'none'",
    );
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.body).toContain(PARTNER.name);
    for (const description of Object.values(SCOPE_DESCRIPTIONS)) expect(page.body).toContain(description);
    expect(page.body).toMatch(/<button[^>]*value="allow"[^>]*>Allow<\/button>/);
    expect(page.body).toMatch(/<button[^>]*value="deny"[^>]*>Deny<\/button>/);
  });

  it('Allow: 303 to the redirect URI with code, state and iss, and the code is good at the token endpoint', async () => {
    const browser = new Browser();
    await signIn(browser);
    const { path, state, verifier } = authorizePath();
    const consent = await browser.get(path);
    const { action, fields } = formFields(consent.body, 'Allow');
    const answer = await browser.post(action, { ...fields, decision: 'allow' });
    expect(answer.status).toBe(303);
    const location = new URL(answer.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
    expect(location.searchParams.get('code')).toBeTruthy();
    expect(location.searchParams.get('state')).toBe(state);
    expect(location.searchParams.get('iss')).toBe(ISSUER);

    const token = await fetch(`${authServerUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: location.searchParams.get('code')!,
        redirect_uri: REDIRECT_URI,
        client_id: PARTNER.clientId,
        client_secret: PARTNER.secret,
        code_verifier: verifier,
      }).toString(),
    });
    expect(token.status).toBe(200);
    expect(await token.json()).toMatchObject({ token_type: 'Bearer' });
  });

  it('Deny: 303 to the redirect URI with error=access_denied and the state', async () => {
    const browser = new Browser();
    await signIn(browser);
    const { path, state } = authorizePath();
    const { action, fields } = formFields((await browser.get(path)).body, 'Deny');
    const answer = await browser.post(action, { ...fields, decision: 'deny' });
    expect(answer.status).toBe(303);
    const location = new URL(answer.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('state')).toBe(state);
    expect(location.searchParams.get('code')).toBeNull();
  });

  it('refuses a decision without the CSRF token with a 403 page and no redirect (RFC 6749 §10.12)', async () => {
    const browser = new Browser();
    await signIn(browser);
    const { action, fields } = formFields((await browser.get(authorizePath().path)).body, 'Allow');
    const { csrf: _dropped, ...withoutCsrf } = fields;
    const answer = await browser.post(action, { ...withoutCsrf, decision: 'allow' });
    expect(answer.status).toBe(403);
    expect(answer.headers.get('location')).toBeNull();
    expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8');
  });

  it('explains an unknown client on a 400 page and never redirects (RFC 6749 §4.1.2.1)', async () => {
    const browser = new Browser();
    await signIn(browser);
    const page = await browser.get(authorizePath({ client_id: 'no-such-partner' }).path);
    expect(page.status).toBe(400);
    expect(page.headers.get('location')).toBeNull();
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('This request cannot be completed');
  });

  it('answers a malformed escape in the path with a 400 page, not JSON', async () => {
    const page = await new Browser().get('/oauth/authorize%zz?client_id=sandbox-partner');
    expect(page.status).toBe(400);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('x-request-id')).toBeTruthy();
    expect(page.body).toContain('</html>');
  });
});

describe('connected partners', () => {
  it('lists the partner after Allow, and Disconnect removes it with a confirmation', async () => {
    const browser = new Browser();
    await signIn(browser);
    const { action, fields } = formFields((await browser.get(authorizePath().path)).body, 'Allow');
    expect((await browser.post(action, { ...fields, decision: 'allow' })).status).toBe(303);

    const listed = await browser.get('/account/connections');
    expect(listed.status).toBe(200);
    expect(listed.body).toContain(`<h2>${PARTNER.name}</h2>`);
    expect(listed.body).toContain(SCOPE_DESCRIPTIONS['vessels:read']);
    expect(listed.body).toMatch(
      /Connected <time datetime="[^"]+">\d{1,2} [A-Z][a-z]+ \d{4}, \d{2}:\d{2} UTC<\/time>/,
    );

    const disconnect = formFields(
      listed.body.slice(listed.body.indexOf(`<h2>${PARTNER.name}</h2>`)),
      'Disconnect',
    );
    expect(disconnect.action).toBe(`/account/connections/${PARTNER.clientId}/disconnect`);
    const done = await browser.post(disconnect.action, disconnect.fields);
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/account/connections');

    const after = await browser.get('/account/connections');
    expect(after.body).toContain(`${PARTNER.name} can no longer read your record.`);
    expect(after.body).not.toContain(`<h2>${PARTNER.name}</h2>`);
  });

  it('signs out: the session ends and the pages ask to sign in again', async () => {
    const browser = new Browser();
    await signIn(browser);
    const { action, fields } = formFields((await browser.get('/account/connections')).body, 'Sign out');
    const out = await browser.post(action, fields);
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/login');
    expect(browser.cookies.has('svc_session')).toBe(false);
    expect((await browser.get('/account/connections')).status).toBe(302);
  });

  it('shows a 503 page within the RPC timeout when auth-server is down', async () => {
    const browser = new Browser();
    await signIn(browser);
    await auth?.close();
    auth = undefined;
    const started = Date.now();
    const page = await browser.get('/account/connections');
    expect(page.status).toBe(503);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('The service is temporarily unavailable');
    expect(Date.now() - started).toBeLessThan(6000);
  });
});

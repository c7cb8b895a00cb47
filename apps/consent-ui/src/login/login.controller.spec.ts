import { AUTH_LOGIN } from '@svc/contracts';
import { DependencyUnavailableError, RpcRemoteError } from '@svc/platform';
import {
  cookieHeader,
  form,
  hiddenField,
  setCookies,
  startTestApp,
  type TestApp,
} from '../../../../test/support/fake-consent-ui';

const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

let t: TestApp;
afterEach(() => t.close());

function answerLogin(app: TestApp) {
  app.rpc.on(AUTH_LOGIN, ({ email, password }) =>
    email === 'alex.morgan@sandbox.test' && password === 'sandbox-password'
      ? { ok: true as const, user_id: 'usr_alex', email }
      : { ok: false as const },
  );
}

/** GET /login, as a browser: the page, the CSRF cookie and the form's token. */
async function openForm(app: TestApp, returnTo = '/oauth/authorize?client_id=sandbox-partner&state=s1') {
  const response = await app.app.inject({
    method: 'GET',
    url: `/login?return_to=${encodeURIComponent(returnTo)}`,
  });
  return {
    response,
    cookie: cookieHeader(response.headers['set-cookie']),
    csrf: hiddenField(response.body, 'csrf')!,
    returnTo: hiddenField(response.body, 'return_to')!,
  };
}

async function postLogin(app: TestApp, cookie: string, fields: Record<string, string>) {
  return app.app.inject({
    method: 'POST',
    url: '/login',
    ...form(fields),
    headers: { ...form(fields).headers, cookie },
  });
}

describe('GET /login', () => {
  beforeEach(async () => {
    t = await startTestApp();
  });

  it('shows a form labelled Email and Password with a Sign in button, and sets the pre-session CSRF cookie', async () => {
    const { response, csrf, returnTo } = await openForm(t);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers).toMatchObject(PAGE_HEADERS);
    expect(response.body).toContain('<label for="email">Email</label>');
    expect(response.body).toContain('<input id="email" name="email" type="email"');
    expect(response.body).toContain('<label for="password">Password</label>');
    expect(response.body).toContain('<input id="password" name="password" type="password"');
    expect(response.body).toMatch(/<button type="submit"[^>]*>Sign in<\/button>/);
    expect(response.body).toContain('<link rel="stylesheet" href="/account/assets/consent.css" />');
    expect(response.body).not.toMatch(/<script|style=/);
    expect(returnTo).toBe('/oauth/authorize?client_id=sandbox-partner&state=s1');
    expect(setCookies(response)).toEqual([
      `svc_login_csrf=${csrf}; Path=/login; Max-Age=7200; HttpOnly; SameSite=Lax`,
    ]);
  });

  it('replaces a return_to that leaves this origin with the connections page (RFC 9700 §4.11)', async () => {
    const { returnTo } = await openForm(t, 'https://evil.example/steal');
    expect(returnTo).toBe('/account/connections');
  });
});

describe('POST /login', () => {
  beforeEach(async () => {
    t = await startTestApp();
    answerLogin(t);
  });

  it('signs in: a new HttpOnly SameSite=Lax session cookie and 303 back to return_to', async () => {
    const { cookie, csrf, returnTo } = await openForm(t);
    const response = await postLogin(t, cookie, {
      email: ' alex.morgan@sandbox.test ',
      password: 'sandbox-password',
      csrf,
      return_to: returnTo,
    });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe('/oauth/authorize?client_id=sandbox-partner&state=s1');
    expect(response.headers['cache-control']).toBe('no-store');
    const cookies = setCookies(response);
    expect(cookies[0]).toMatch(
      /^svc_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=43200; HttpOnly; SameSite=Lax$/,
    );
    expect(cookies[1]).toMatch(/^svc_login_csrf=; Path=\/login; Max-Age=0/);
    expect(t.rpc.callsOf(AUTH_LOGIN)).toEqual([
      { email: 'alex.morgan@sandbox.test', password: 'sandbox-password', client_ip: '127.0.0.1' },
    ]);
    expect(t.sessions.rows.size).toBe(1);
    expect([...t.sessions.rows.values()][0].userId).toBe('usr_alex');
  });

  it('marks the session cookie Secure when the public URL is https', async () => {
    await t.close();
    t = await startTestApp({ PUBLIC_BASE_URL: 'https://sandbox.example' });
    answerLogin(t);
    const { cookie, csrf } = await openForm(t);
    const response = await postLogin(t, cookie, {
      email: 'alex.morgan@sandbox.test',
      password: 'sandbox-password',
      csrf,
    });
    expect(setCookies(response)[0]).toMatch(/; HttpOnly; Secure; SameSite=Lax$/);
  });

  it('sends a return_to that leaves this origin to the connections page instead', async () => {
    const { cookie, csrf } = await openForm(t);
    const response = await postLogin(t, cookie, {
      email: 'alex.morgan@sandbox.test',
      password: 'sandbox-password',
      csrf,
      return_to: '//evil.example/',
    });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe('/account/connections');
  });

  it.each([
    ['an e-mail', { email: 'alex.morgan@sandbox.test\u0000', password: 'sandbox-password' }],
    ['a password', { email: 'alex.morgan@sandbox.test', password: 'sandbox\u0000password' }],
  ])('answers 401 without asking auth-server when %s holds a NUL', async (_what, fields) => {
    const { cookie, csrf } = await openForm(t);
    const response = await postLogin(t, cookie, { ...fields, csrf });
    expect(response.statusCode).toBe(401);
    expect(response.body).toContain('Email or password is incorrect.');
    expect(t.rpc.callsOf(AUTH_LOGIN)).toEqual([]);
  });

  it('answers 401 with the same message for a wrong password and an unknown e-mail', async () => {
    const { cookie, csrf } = await openForm(t);
    const wrongPassword = await postLogin(t, cookie, {
      email: 'alex.morgan@sandbox.test',
      password: 'nope',
      csrf,
    });
    const unknown = await postLogin(t, cookie, { email: 'nobody@sandbox.test', password: 'nope', csrf });
    for (const response of [wrongPassword, unknown]) {
      expect(response.statusCode).toBe(401);
      expect(response.headers).toMatchObject(PAGE_HEADERS);
      expect(response.body).toContain('Email or password is incorrect.');
      expect(setCookies(response).some((c) => c.startsWith('svc_session='))).toBe(false);
    }
    expect(unknown.body.replace(/nobody@sandbox\.test/g, '')).toBe(
      wrongPassword.body.replace(/alex\.morgan@sandbox\.test/g, ''),
    );
    expect(t.sessions.rows.size).toBe(0);
  });

  it('passes auth-server the address the gateway appended, not one the client put before it', async () => {
    const { cookie, csrf } = await openForm(t);
    await t.app.inject({
      method: 'POST',
      url: '/login',
      ...form({ email: 'alex.morgan@sandbox.test', password: 'nope', csrf }),
      headers: {
        ...form({}).headers,
        cookie,
        'x-forwarded-for': '198.51.100.1, 203.0.113.7',
      },
    });
    expect(t.rpc.callsOf(AUTH_LOGIN)).toEqual([expect.objectContaining({ client_ip: '203.0.113.7' })]);
  });

  it('answers a throttled attempt with 429, Retry-After and the minutes to wait, and starts no session', async () => {
    t.rpc.on(AUTH_LOGIN, () => ({ ok: false as const, retry_after_seconds: 601 }));
    const { cookie, csrf } = await openForm(t);
    const response = await postLogin(t, cookie, {
      email: 'alex.morgan@sandbox.test',
      password: 'sandbox-password',
      csrf,
    });
    expect(response.statusCode).toBe(429);
    expect(response.headers['retry-after']).toBe('601');
    expect(response.headers).toMatchObject(PAGE_HEADERS);
    expect(response.body).toContain('Too many failed sign-in attempts. Try again in 11 minutes.');
    expect(hiddenField(response.body, 'csrf')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(setCookies(response).some((c) => c.startsWith('svc_session='))).toBe(false);
    expect(t.sessions.rows.size).toBe(0);
  });

  it('refuses a post without the form’s CSRF token (login CSRF) before asking auth-server', async () => {
    const { cookie } = await openForm(t);
    const response = await postLogin(t, cookie, {
      email: 'alex.morgan@sandbox.test',
      password: 'sandbox-password',
      csrf: 'forged',
    });
    expect(response.statusCode).toBe(403);
    expect(response.body).toContain('The sign-in form expired. Please sign in again.');
    expect(hiddenField(response.body, 'csrf')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(t.rpc.callsOf(AUTH_LOGIN)).toEqual([]);
  });

  it('asks for both fields when one is empty', async () => {
    const { cookie, csrf } = await openForm(t);
    const response = await postLogin(t, cookie, { email: 'alex.morgan@sandbox.test', password: '', csrf });
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('Enter your email and password.');
    expect(t.rpc.callsOf(AUTH_LOGIN)).toEqual([]);
  });

  it('shows a 503 page, not a hang or a 500, when auth-server does not answer', async () => {
    t.rpc.failWith(AUTH_LOGIN, new DependencyUnavailableError('rpc.auth-server'));
    const { cookie, csrf } = await openForm(t);
    const response = await postLogin(t, cookie, {
      email: 'alex.morgan@sandbox.test',
      password: 'sandbox-password',
      csrf,
    });
    expect(response.statusCode).toBe(503);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers).toMatchObject(PAGE_HEADERS);
    expect(response.body).toContain('The service is temporarily unavailable');
    expect(response.body).toContain(`<code>${response.headers['x-request-id'] as string}</code>`);
  });
});

describe('POST /login while auth-server cannot work', () => {
  beforeEach(async () => {
    t = await startTestApp();
  });

  it('shows a 503 page when auth-server answers temporarily_unavailable', async () => {
    t.rpc.failWith(
      AUTH_LOGIN,
      new RpcRemoteError('auth.login', { error: 'temporarily_unavailable', message: 'database' }),
    );
    const { cookie, csrf } = await openForm(t);
    const response = await postLogin(t, cookie, { email: 'a@sandbox.test', password: 'p', csrf });
    expect(response.statusCode).toBe(503);
    expect(response.body).toContain('The service is temporarily unavailable');
  });
});

describe('sign-out', () => {
  beforeEach(async () => {
    t = await startTestApp();
  });

  it('GET /logout shows a Sign out form with the session’s CSRF token', async () => {
    const { cookie, csrf } = await t.signIn();
    const response = await t.app.inject({ method: 'GET', url: '/logout', headers: { cookie } });
    expect(response.statusCode).toBe(200);
    expect(response.body).toMatch(/<form method="post" action="\/logout"/);
    expect(response.body).toMatch(/<button type="submit"[^>]*>Sign out<\/button>/);
    expect(hiddenField(response.body, 'csrf')).toBe(csrf);
  });

  it('GET /logout without a session goes to the sign-in page', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/logout' });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe('/login');
  });

  it('POST /logout with the CSRF token ends the session, clears the cookie and goes to /login', async () => {
    const { cookie, csrf } = await t.signIn();
    const response = await t.app.inject({
      method: 'POST',
      url: '/logout',
      ...form({ csrf }),
      headers: { ...form({ csrf }).headers, cookie },
    });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe('/login');
    expect(setCookies(response)).toEqual([
      expect.stringMatching(/^svc_session=; Path=\/; Max-Age=0;.* HttpOnly; SameSite=Lax$/),
    ]);
    expect(t.sessions.rows.size).toBe(0);
  });

  it('POST /logout without the CSRF token is refused and keeps the session', async () => {
    const { cookie } = await t.signIn();
    const response = await t.app.inject({
      method: 'POST',
      url: '/logout',
      ...form({}),
      headers: { ...form({}).headers, cookie },
    });
    expect(response.statusCode).toBe(403);
    expect(response.body).toContain('This form has expired');
    expect(t.sessions.rows.size).toBe(1);
  });
});

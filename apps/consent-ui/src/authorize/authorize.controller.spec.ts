import { AUTH_AUTHORIZE_DECIDE, AUTH_AUTHORIZE_VALIDATE, SCOPE_DESCRIPTIONS } from '@svc/contracts';
import { DependencyUnavailableError } from '@svc/platform';
import { form, hiddenField, startTestApp, type TestApp } from '../../../../test/support/fake-consent-ui';

const PARAMS = {
  response_type: 'code',
  client_id: 'sandbox-partner',
  redirect_uri: 'http://localhost:8765/callback',
  scope: 'profile:read seatime:read',
  state: 'st&"<1>',
  code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  code_challenge_method: 'S256',
};
const AUTHORIZE_URL = `/oauth/authorize?${new URLSearchParams(PARAMS).toString()}`;

let t: TestApp;
beforeEach(async () => {
  t = await startTestApp();
});
afterEach(() => t.close());

function answerConsent(clientName = 'Sandbox Partner') {
  t.rpc.on(AUTH_AUTHORIZE_VALIDATE, ({ params }) => ({
    outcome: 'consent' as const,
    client_name: clientName,
    scopes: params.scope.split(' ').map((scope) => ({
      scope,
      description: SCOPE_DESCRIPTIONS[scope as keyof typeof SCOPE_DESCRIPTIONS],
    })),
    params,
  }));
}

function decisionForm(fields: Record<string, string>, cookie: string) {
  const body = form(fields);
  return {
    method: 'POST' as const,
    url: '/oauth/authorize',
    payload: body.payload,
    headers: { ...body.headers, cookie },
  };
}

function postedParams(): Record<string, string> {
  return Object.fromEntries(Object.entries(PARAMS).map(([k, v]) => [`param.${k}`, v]));
}

describe('GET /oauth/authorize', () => {
  it('sends a browser without a session to sign in, with the whole request as return_to', async () => {
    const response = await t.app.inject({ method: 'GET', url: AUTHORIZE_URL });
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe(`/login?return_to=${encodeURIComponent(AUTHORIZE_URL)}`);
    expect(t.rpc.calls).toEqual([]);
  });

  it('shows the consent screen: partner, one line per scope, Allow and Deny, CSRF token, parameters', async () => {
    answerConsent();
    const { cookie, csrf } = await t.signIn('usr_alex');
    const response = await t.app.inject({ method: 'GET', url: AUTHORIZE_URL, headers: { cookie } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(response.headers['content-security-policy']).not.toContain('form-action');
    expect(response.headers['x-frame-options']).toBe('DENY');
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.body).toContain(
      '<span class="partner">Sandbox Partner</span> wants to read your crew record',
    );
    expect(response.body).toContain(`<li>${SCOPE_DESCRIPTIONS['profile:read']}</li>`);
    expect(response.body).toContain(`<li>${SCOPE_DESCRIPTIONS['seatime:read']}</li>`);
    expect(response.body).not.toContain(SCOPE_DESCRIPTIONS['vessels:read']);
    expect(response.body).toContain(
      '<button type="submit" name="decision" value="allow" class="primary">Allow</button>',
    );
    expect(response.body).toContain(
      '<button type="submit" name="decision" value="deny" class="secondary">Deny</button>',
    );
    expect(response.body).toContain('<strong>localhost:8765</strong>');
    expect(hiddenField(response.body, 'csrf')).toBe(csrf);
    for (const [name, value] of Object.entries(PARAMS))
      expect(hiddenField(response.body, `param.${name}`)).toBe(value);
    expect(response.body).toContain('value="st&amp;&quot;&lt;1&gt;"');
    expect(t.rpc.callsOf(AUTH_AUTHORIZE_VALIDATE)).toEqual([{ params: PARAMS, repeated: [] }]);
  });

  it('escapes whatever auth-server says about the partner', async () => {
    answerConsent('<img src=x onerror=alert(1)> & Co');
    const { cookie } = await t.signIn();
    const response = await t.app.inject({ method: 'GET', url: AUTHORIZE_URL, headers: { cookie } });
    expect(response.body).not.toContain('<img src=x');
    expect(response.body).toContain('&lt;img src=x onerror=alert(1)&gt; &amp; Co');
  });

  it('passes repeated parameters on by name (RFC 6749 §3.1)', async () => {
    t.rpc.on(AUTH_AUTHORIZE_VALIDATE, () => ({
      outcome: 'redirect' as const,
      redirect_to: 'http://localhost:8765/callback?error=invalid_request&state=a',
    }));
    const { cookie } = await t.signIn();
    const response = await t.app.inject({
      method: 'GET',
      url: `${AUTHORIZE_URL}&state=again`,
      headers: { cookie },
    });
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe('http://localhost:8765/callback?error=invalid_request&state=a');
    expect(t.rpc.callsOf(AUTH_AUTHORIZE_VALIDATE)).toEqual([{ params: PARAMS, repeated: ['state'] }]);
  });

  it('explains an unknown client on a 400 page and never redirects (RFC 6749 §4.1.2.1)', async () => {
    t.rpc.on(AUTH_AUTHORIZE_VALIDATE, () => ({
      outcome: 'error_page' as const,
      error: 'invalid_client',
      error_description: 'Unknown client_id <nobody>.',
    }));
    const { cookie } = await t.signIn();
    const response = await t.app.inject({ method: 'GET', url: AUTHORIZE_URL, headers: { cookie } });
    expect(response.statusCode).toBe(400);
    expect(response.headers.location).toBeUndefined();
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.body).toContain('Unknown client_id &lt;nobody&gt;.');
    expect(response.body).toContain('<code>invalid_client</code>');
    expect(response.body).toContain(`<code>${response.headers['x-request-id'] as string}</code>`);
  });

  it('shows a 503 page when auth-server does not answer', async () => {
    t.rpc.failWith(AUTH_AUTHORIZE_VALIDATE, new DependencyUnavailableError('rpc.auth-server'));
    const { cookie } = await t.signIn();
    const response = await t.app.inject({ method: 'GET', url: AUTHORIZE_URL, headers: { cookie } });
    expect(response.statusCode).toBe(503);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers['x-frame-options']).toBe('DENY');
  });
});

describe('POST /oauth/authorize', () => {
  beforeEach(() => {
    t.rpc.on(AUTH_AUTHORIZE_DECIDE, ({ decision, params }) => ({
      outcome: 'redirect' as const,
      redirect_to:
        decision === 'allow'
          ? `${params.redirect_uri}?code=c0de&state=${encodeURIComponent(params.state)}&iss=http%3A%2F%2Flocalhost%3A8080`
          : `${params.redirect_uri}?error=access_denied&state=${encodeURIComponent(params.state)}`,
    }));
  });

  it('Allow: records the decision with the member and the parameters, then 303 to the partner', async () => {
    const { cookie, csrf } = await t.signIn('usr_alex');
    const response = await t.app.inject(decisionForm({ ...postedParams(), csrf, decision: 'allow' }, cookie));
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe(
      `http://localhost:8765/callback?code=c0de&state=${encodeURIComponent(PARAMS.state)}&iss=http%3A%2F%2Flocalhost%3A8080`,
    );
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers['referrer-policy']).toBe('no-referrer');
    expect(t.rpc.callsOf(AUTH_AUTHORIZE_DECIDE)).toEqual([
      { user_id: 'usr_alex', params: PARAMS, decision: 'allow' },
    ]);
  });

  it('Deny: 303 to the partner with access_denied', async () => {
    const { cookie, csrf } = await t.signIn('usr_alex');
    const response = await t.app.inject(decisionForm({ ...postedParams(), csrf, decision: 'deny' }, cookie));
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toMatch(/\?error=access_denied&state=/);
    expect(t.rpc.callsOf(AUTH_AUTHORIZE_DECIDE)).toEqual([
      { user_id: 'usr_alex', params: PARAMS, decision: 'deny' },
    ]);
  });

  it.each([
    ['no token', {}],
    ['a wrong token', { csrf: 'x'.repeat(43) }],
  ])('refuses the decision with %s: 403 page, nothing recorded (RFC 6749 §10.12)', async (_label, extra) => {
    const { cookie } = await t.signIn();
    const response = await t.app.inject(
      decisionForm({ ...postedParams(), ...extra, decision: 'allow' }, cookie),
    );
    expect(response.statusCode).toBe(403);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers.location).toBeUndefined();
    expect(response.body).toContain('This form has expired');
    expect(t.rpc.callsOf(AUTH_AUTHORIZE_DECIDE)).toEqual([]);
  });

  it('refuses a token of another session', async () => {
    const mine = await t.signIn('usr_a');
    const theirs = await t.signIn('usr_b');
    const response = await t.app.inject(
      decisionForm({ ...postedParams(), csrf: theirs.csrf, decision: 'allow' }, mine.cookie),
    );
    expect(response.statusCode).toBe(403);
  });

  it('refuses a decision without a session with 403', async () => {
    const response = await t.app.inject(
      decisionForm({ ...postedParams(), csrf: 'x', decision: 'allow' }, ''),
    );
    expect(response.statusCode).toBe(403);
    expect(response.body).toContain('Your session has ended');
    expect(t.rpc.callsOf(AUTH_AUTHORIZE_DECIDE)).toEqual([]);
  });

  it('refuses a decision that is neither allow nor deny with 400', async () => {
    const { cookie, csrf } = await t.signIn();
    const response = await t.app.inject(decisionForm({ ...postedParams(), csrf, decision: 'maybe' }, cookie));
    expect(response.statusCode).toBe(400);
    expect(t.rpc.callsOf(AUTH_AUTHORIZE_DECIDE)).toEqual([]);
  });

  it('shows auth-server’s error page with 400 and no redirect', async () => {
    t.rpc.on(AUTH_AUTHORIZE_DECIDE, () => ({
      outcome: 'error_page' as const,
      error: 'invalid_request',
      error_description: 'redirect_uri is not registered for this client.',
    }));
    const { cookie, csrf } = await t.signIn();
    const response = await t.app.inject(decisionForm({ ...postedParams(), csrf, decision: 'allow' }, cookie));
    expect(response.statusCode).toBe(400);
    expect(response.headers.location).toBeUndefined();
    expect(response.body).toContain('redirect_uri is not registered for this client.');
  });
});

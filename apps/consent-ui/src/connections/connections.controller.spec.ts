import {
  AUTH_CONSENTS_LIST,
  AUTH_MEMBER_ACCESS,
  AUTH_CONSENTS_REVOKE,
  SCOPE_DESCRIPTIONS,
  SPONSORSHIP_MEMBER_SPONSORSHIPS,
  type Connection,
} from '@svc/contracts';
import { DependencyUnavailableError, RpcRemoteError } from '@svc/platform';
import {
  cookieHeader,
  form,
  hiddenField,
  setCookies,
  startTestApp,
  type TestApp,
} from '../../../../test/support/fake-consent-ui';

let t: TestApp;
let connections: Connection[];

beforeEach(async () => {
  t = await startTestApp();
  connections = [
    {
      client_id: 'sandbox-partner',
      client_name: 'Sandbox Partner',
      scopes: ['profile:read', 'vessels:read'],
      connected_at: '2026-03-05T14:05:09.000Z',
    },
    {
      client_id: 'partner/with odd&id',
      client_name: 'Odd <Partner>',
      scopes: ['future:scope'],
      connected_at: '2026-01-01T00:00:00.000Z',
    },
  ];
  t.rpc.on(AUTH_CONSENTS_LIST, () => ({ connections }));
  t.rpc.on(AUTH_MEMBER_ACCESS, () => ({ consents: [], reads: [], partners: [] }));
  t.rpc.on(AUTH_CONSENTS_REVOKE, ({ client_id }) => {
    const before = connections.length;
    connections = connections.filter((c) => c.client_id !== client_id);
    return { revoked: connections.length < before };
  });
});
afterEach(() => t.close());

function disconnect(clientId: string, cookie: string, fields: Record<string, string>) {
  const body = form(fields);
  return t.app.inject({
    method: 'POST',
    url: `/account/connections/${encodeURIComponent(clientId)}/disconnect`,
    payload: body.payload,
    headers: { ...body.headers, cookie },
  });
}

describe('GET /account/connections', () => {
  it('sends a browser without a session to sign in and back', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/account/connections' });
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe('/login?return_to=%2Faccount%2Fconnections');
  });

  it('lists each partner with its scopes in plain words, the date connected and a Disconnect button', async () => {
    const { cookie, csrf } = await t.signIn('usr_alex');
    const response = await t.app.inject({ method: 'GET', url: '/account/connections', headers: { cookie } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['x-frame-options']).toBe('DENY');
    expect(t.rpc.callsOf(AUTH_CONSENTS_LIST)).toEqual([{ user_id: 'usr_alex' }]);
    const body = response.body;
    expect(body).toContain('<h2>Sandbox Partner</h2>');
    expect(body).toContain(`<li>${SCOPE_DESCRIPTIONS['profile:read']}</li>`);
    expect(body).toContain(`<li>${SCOPE_DESCRIPTIONS['vessels:read']}</li>`);
    expect(body).toContain('<time datetime="2026-03-05T14:05:09.000Z">5 March 2026, 14:05 UTC</time>');
    expect(body).toContain('<form method="post" action="/account/connections/sandbox-partner/disconnect"');
    expect(body).toContain('action="/account/connections/partner%2Fwith%20odd%26id/disconnect"');
    expect(body).toContain('<h2>Odd &lt;Partner&gt;</h2>');
    expect(body).toContain('<li>future:scope</li>');
    expect(body.match(/<button type="submit" class="danger">Disconnect<\/button>/g)).toHaveLength(2);
    expect(body).toMatch(/<form method="post" action="\/logout"[\s\S]*>Sign out<\/button>/);
    expect(hiddenField(body, 'csrf')).toBe(csrf);
  });

  it("shows each partner's last access and its reads of the last 30 days per scope, never another partner's", async () => {
    const today = new Date().toISOString().slice(0, 10);
    const longAgo = new Date(Date.now() - 40 * 86_400_000).toISOString().slice(0, 10);
    t.rpc.on(AUTH_MEMBER_ACCESS, () => ({
      consents: [],
      partners: [
        { client_id: 'sandbox-partner', client_name: 'Sandbox Partner' },
        { client_id: 'partner/with odd&id', client_name: 'Odd <Partner>' },
        { client_id: 'gone', client_name: 'Gone Fishing' },
      ],
      reads: [
        {
          client_id: 'sandbox-partner',
          scope: 'profile:read' as const,
          day: longAgo,
          count: 500,
          last_at: `${longAgo}T08:00:00.000Z`,
        },
        {
          client_id: 'sandbox-partner',
          scope: 'profile:read' as const,
          day: today,
          count: 7,
          last_at: `${today}T00:00:01.000Z`,
        },
        {
          client_id: 'gone',
          scope: 'vessels:read' as const,
          day: today,
          count: 1234,
          last_at: `${today}T00:00:02.000Z`,
        },
      ],
    }));
    const { cookie } = await t.signIn('usr_alex');
    const response = await t.app.inject({ method: 'GET', url: '/account/connections', headers: { cookie } });
    expect(response.statusCode).toBe(200);
    expect(t.rpc.callsOf(AUTH_MEMBER_ACCESS)).toEqual([{ user_id: 'usr_alex' }]);
    const body = response.body;
    const card = (name: string) =>
      body.slice(body.indexOf(`<h2>${name}</h2>`)).split(/<li class="connection">|previous-heading/)[0];
    const sandbox = card('Sandbox Partner');
    expect(sandbox).toContain(`Last access: <time datetime="${today}T00:00:01.000Z">`);
    expect(sandbox).toContain('<caption>');
    expect(sandbox).toMatch(/Reads by Sandbox Partner in the last 30 days/);
    // 7 today; the 500 of 40 days ago are outside the window. vessels:read granted, never read.
    expect(sandbox).toMatch(
      new RegExp(`<th scope="row">${SCOPE_DESCRIPTIONS['profile:read']}</th>\\s*<td class="count">7</td>`),
    );
    expect(sandbox).toMatch(
      new RegExp(`<th scope="row">${SCOPE_DESCRIPTIONS['vessels:read']}</th>\\s*<td class="count">0</td>`),
    );
    expect(sandbox).not.toContain('1,234');
    const odd = card('Odd &lt;Partner&gt;');
    expect(odd).toContain('Last access: Never');
    expect(odd).not.toContain('<td class="count">7</td>');
    // A partner no longer connected keeps its history under "Previously connected".
    expect(body).toContain('<h2 id="previous-heading">Previously connected</h2>');
    const previous = body.slice(body.indexOf('previous-heading'));
    expect(previous).toContain('Gone Fishing <span class="muted">(disconnected)</span>');
    expect(previous).toContain('<td class="count">1,234</td>');
    expect(body).toMatch(/<a href="\/account\/export\?token=[0-9a-f]{64}" download>Download my data<\/a>/);
  });

  it('lists no "Previously connected" section when every partner with history is connected', async () => {
    const { cookie } = await t.signIn();
    const response = await t.app.inject({ method: 'GET', url: '/account/connections', headers: { cookie } });
    expect(response.body).not.toContain('Previously connected');
  });

  it('says so when no partner is connected', async () => {
    connections = [];
    const { cookie } = await t.signIn();
    const response = await t.app.inject({ method: 'GET', url: '/account/connections', headers: { cookie } });
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('You have not connected any partners.');
    expect(response.body).not.toContain('Disconnect</button>');
  });

  it('lists the partners that sponsor or sponsored the member, with since and until', async () => {
    t.rpc.on(SPONSORSHIP_MEMBER_SPONSORSHIPS, () => ({
      sponsorships: [
        {
          client_id: 'p1',
          partner_name: 'Harbour <Union>',
          status: 'active' as const,
          since: '2026-03-01T10:00:00.000Z',
          until: '2027-03-01T10:00:00.000Z',
        },
        {
          client_id: 'p2',
          partner_name: 'Quick Crew',
          status: 'cancelled' as const,
          since: '2026-02-01T10:00:00.000Z',
          until: '2026-02-01T10:05:00.000Z',
        },
      ],
    }));
    const { cookie } = await t.signIn('usr_alex');
    const response = await t.app.inject({ method: 'GET', url: '/account/connections', headers: { cookie } });
    expect(response.statusCode).toBe(200);
    expect(t.rpc.callsOf(SPONSORSHIP_MEMBER_SPONSORSHIPS)).toEqual([{ user_id: 'usr_alex' }]);
    const body = response.body;
    expect(body).toContain('<h2 id="sponsorships-heading">Sponsorships</h2>');
    expect(body).toContain('<th scope="row">Harbour &lt;Union&gt;</th>');
    expect(body).toContain('<time datetime="2026-03-01T10:00:00.000Z">1 March 2026</time>');
    expect(body).toContain('<time datetime="2027-03-01T10:00:00.000Z">1 March 2027</time>');
    expect(body).toContain('<th scope="row">Quick Crew</th>');
    expect(body).toContain('Cancelled by the partner');
  });

  it('still lists the connections when the sponsorships cannot be read', async () => {
    t.rpc.failWith(SPONSORSHIP_MEMBER_SPONSORSHIPS, new DependencyUnavailableError('rpc.sponsorship-api'));
    const { cookie } = await t.signIn();
    const response = await t.app.inject({ method: 'GET', url: '/account/connections', headers: { cookie } });
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('<h2>Sandbox Partner</h2>');
    expect(response.body).toContain('Your sponsorships cannot be shown right now.');
  });

  it('shows a 503 page when auth-server does not answer', async () => {
    t.rpc.failWith(AUTH_CONSENTS_LIST, new DependencyUnavailableError('rpc.auth-server'));
    const { cookie } = await t.signIn();
    const response = await t.app.inject({ method: 'GET', url: '/account/connections', headers: { cookie } });
    expect(response.statusCode).toBe(503);
    expect(response.body).toContain('The service is temporarily unavailable');
  });
});

describe('POST /account/connections/:client_id/disconnect', () => {
  it('revokes the partner and confirms it once on the next page', async () => {
    const { cookie, csrf } = await t.signIn('usr_alex');
    const response = await disconnect('sandbox-partner', cookie, { csrf });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe('/account/connections');
    expect(t.rpc.callsOf(AUTH_CONSENTS_REVOKE)).toEqual([
      { user_id: 'usr_alex', client_id: 'sandbox-partner' },
    ]);
    const flash = setCookies(response);
    expect(flash).toEqual([
      expect.stringMatching(
        /^svc_flash=[^;]+; Path=\/account\/connections; Max-Age=60; HttpOnly; SameSite=Lax$/,
      ),
    ]);

    const next = await t.app.inject({
      method: 'GET',
      url: '/account/connections',
      headers: { cookie: `${cookie}; ${cookieHeader(flash)}` },
    });
    expect(next.body).toContain(
      '<p class="notice" role="status">Sandbox Partner can no longer read your record.</p>',
    );
    expect(next.body).not.toContain('<h2>Sandbox Partner</h2>');
    expect(setCookies(next)).toEqual([
      expect.stringMatching(/^svc_flash=; Path=\/account\/connections; Max-Age=0/),
    ]);
  });

  it('decodes the client id of the path', async () => {
    const { cookie, csrf } = await t.signIn('usr_alex');
    const response = await disconnect('partner/with odd&id', cookie, { csrf });
    expect(response.statusCode).toBe(303);
    expect(t.rpc.callsOf(AUTH_CONSENTS_REVOKE)).toEqual([
      { user_id: 'usr_alex', client_id: 'partner/with odd&id' },
    ]);
  });

  it('refuses a disconnect without the CSRF token', async () => {
    const { cookie } = await t.signIn();
    const response = await disconnect('sandbox-partner', cookie, { csrf: 'forged' });
    expect(response.statusCode).toBe(403);
    expect(t.rpc.callsOf(AUTH_CONSENTS_REVOKE)).toEqual([]);
  });

  it('says "Could not disconnect right now" with 503 when auth-server answers temporarily_unavailable', async () => {
    t.rpc.failWith(
      AUTH_CONSENTS_REVOKE,
      new RpcRemoteError('auth.consents.revoke', { error: 'temporarily_unavailable', message: 'cache' }),
    );
    const { cookie, csrf } = await t.signIn();
    const response = await disconnect('sandbox-partner', cookie, { csrf });
    expect(response.statusCode).toBe(503);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.body).toContain('Could not disconnect right now, please try again');
    expect(setCookies(response)).toEqual([]);
  });

  it('shows any other remote error as a 500 page with the request id', async () => {
    t.rpc.failWith(
      AUTH_CONSENTS_REVOKE,
      new RpcRemoteError('auth.consents.revoke', { status: 'error', message: 'Internal server error' }),
    );
    const { cookie, csrf } = await t.signIn();
    const response = await disconnect('sandbox-partner', cookie, { csrf });
    expect(response.statusCode).toBe(500);
    expect(response.body).toContain('Something went wrong');
    expect(response.body).toContain(`<code>${response.headers['x-request-id'] as string}</code>`);
  });
});

import type { EndpointHour, PortalAnswer, PortalSeatsResult } from '@svc/contracts';
import { attemptsChart } from './portal-chart.view';
import type { CookiePolicy } from '../sessions/session-cookies';
import { sessionCookieOf } from '../sessions/session-store';
import { portalSessionKind } from './portal-cookies';
import { pick, type PortalSession } from './portal.service';
import {
  actionResult,
  deliveryResult,
  expiredResult,
  linkResult,
  overviewResult,
  seatsResult,
} from './portal.view';

const session: PortalSession = {
  ref: 'pps_test',
  clientId: 'partner-a',
  partnerName: 'Partner <A>',
  sponsorship: true,
  frameOrigins: ['https://a.example'],
  csrfToken: 'c'.repeat(43),
  expiresAt: new Date('2026-03-03T10:00:00Z'),
};

const hours = (attempts: number[]): EndpointHour[] =>
  attempts.map((n, i) => ({
    hour: `2026-03-03T${String(i).padStart(2, '0')}:00:00Z`,
    attempts: n,
    successes: Math.floor(n / 2),
  }));

describe('the attempts chart', () => {
  it('is inline SVG with a title and a summary, and a table of every hour', () => {
    const chart = attemptsChart(hours([...Array(23).fill(0), 10])).value;
    expect(chart).toMatch(/<svg[^>]*role="img"/);
    expect(chart).toContain('<title id="chart-title">');
    expect(chart).toContain('10 attempts in the last 24 hours, 5 acknowledged and 5 failed');
    expect(chart.match(/<tr>/g)).toHaveLength(25);
    expect(chart).not.toMatch(/<script|style=/);
  });

  it('says there were no attempts, without dividing by zero', () => {
    const chart = attemptsChart(hours(Array(24).fill(0))).value;
    expect(chart).toContain('No attempts in the last 24 hours.');
    expect(chart).not.toContain('NaN');
  });
});

describe('portal pages', () => {
  it('escape what the endpoint answered and the partner’s name', () => {
    const result = deliveryResult(session, {
      ok: true,
      result: {
        delivery_id: 'dlv_aaaaaaaaaaaaaaaaaaaa',
        event_id: 'evt_aaaaaaaaaaaaaaaaaaaa',
        event_type: 'webhook.test',
        user_id: 'usr_x',
        status: 'given_up',
        attempt_count: 1,
        created_at: '2026-03-03T09:00:00Z',
        last_attempt_at: '2026-03-03T09:00:00Z',
        next_attempt_at: null,
        last_response_status: 500,
        given_up_reason: 'attempts_exhausted',
        redelivery_of: null,
        attempts: [
          {
            attempt: 1,
            attempted_at: '2026-03-03T09:00:00Z',
            response_status: 500,
            error: null,
            duration_ms: 12,
            response_body: '<script>alert(1)</script>',
          },
        ],
      },
    });
    if (result.kind !== 'page') throw new Error('expected a page');
    expect(result.body.value).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(result.body.value).not.toContain('<script>');
    expect(result.body.value).toContain('Partner &lt;A&gt;');
    expect(result.frameAncestors).toEqual(['https://a.example']);
  });

  it('show a refusal with the API’s status and detail', () => {
    const answer: PortalAnswer<PortalSeatsResult> = {
      ok: false,
      problem: {
        status: 422,
        code: 'invalid_request',
        detail: 'bad',
        errors: [{ field: 'cursor', message: 'no' }],
      },
    };
    const result = seatsResult(session, {}, answer);
    expect(result.status).toBe(422);
    if (result.kind !== 'page') throw new Error('expected a page');
    expect(result.body.value).toContain('<code>cursor</code>: no');
  });

  it('the expired link page shows no partner and cannot be framed', () => {
    const result = expiredResult();
    expect(result.status).toBe(410);
    if (result.kind !== 'page') throw new Error('expected a page');
    expect(result.frameAncestors).toBeUndefined();
  });
});

describe('the portal cookie', () => {
  it('is HttpOnly on /portal for an hour; SameSite=None, Secure and Partitioned where cookies are Secure', () => {
    const portalCookie = (policy: CookiePolicy, id: string) => sessionCookieOf(portalSessionKind(policy), id);
    expect(portalCookie({ secure: true }, 'x')).toBe(
      'svc_portal=x; Path=/portal; Max-Age=3600; HttpOnly; Secure; SameSite=None; Partitioned',
    );
    expect(portalCookie({ secure: false }, 'x')).toBe(
      'svc_portal=x; Path=/portal; Max-Age=3600; HttpOnly; SameSite=Lax',
    );
    expect(sessionCookieOf(portalSessionKind({ secure: false }), '', 0)).toMatch(
      /^svc_portal=; Path=\/portal; Max-Age=0/,
    );
  });
});

describe('pick: only the API’s own query names reach the owning app', () => {
  it('keeps named non-empty strings and drops the rest', () => {
    expect(
      pick({ status: 'failed', since: '', extra: 'x', limit: ['1', '2'] }, ['status', 'since', 'limit']),
    ).toEqual({
      status: 'failed',
    });
    expect(pick(undefined, ['status'])).toEqual({});
  });
});

describe('a link’s page', () => {
  const partner = {
    client_id: 'partner-b',
    name: 'Partner <B>',
    sponsorship: false,
    frame_origins: ['https://b.example'],
  };
  const token = 't'.repeat(43);

  it('is a form that posts the token, framed like the link’s portal, with no CSRF token to give away', () => {
    const result = linkResult({ outcome: 'offer', token, partner });
    expect(result).toMatchObject({ kind: 'page', status: 200, frameAncestors: ['https://b.example'] });
    const body = result.kind === 'page' ? result.body.value : '';
    expect(body).toContain('<form method="post" action="/portal/open"');
    expect(body).toContain(`name="token" value="${token}"`);
    expect(body).not.toContain('name="csrf"');
    expect(body).toContain('Partner &lt;B&gt;');
    expect(body).toContain('Open the portal');
  });

  it('asks before ending another partner’s session, with that session’s CSRF token in the form', () => {
    const result = linkResult({ outcome: 'offer', token, partner, signedInAs: session });
    const body = result.kind === 'page' ? result.body.value : '';
    expect(body).toContain(
      'You are signed in to the portal as <strong class="partner">Partner &lt;A&gt;</strong>',
    );
    expect(body).toContain('Continue as Partner &lt;B&gt;');
    expect(body).toContain(`name="csrf" value="${session.csrfToken}"`);
  });
});

describe('the signing keys', () => {
  const key = {
    id: 'whk_aaaaaaaaaaaaaaaaaaaaaa',
    algorithm: 'Ed25519' as const,
    public_key: `whpk_${'A'.repeat(43)}=`,
    created_at: '2026-03-03T09:00:00.000Z',
    expires_at: null,
  };
  const endpoint = {
    url: 'https://a.example/hook',
    status: 'enabled' as const,
    disabled_at: null,
    disabled_reason: null,
    last_success_at: null,
    last_failure_at: null,
    attempts_24h: 0,
    success_rate_24h: null,
  };
  const bodyOf = (result: ReturnType<typeof overviewResult>) =>
    result.kind === 'page' ? result.body.value : '';

  it('the endpoint page offers to create the first key, then lists each public key and offers to replace it', () => {
    const none = bodyOf(
      overviewResult(session, { ok: true, result: { endpoint, hours: [], signing_keys: [] } }),
    );
    expect(none).toContain('No signing keys');
    expect(none).toMatch(
      /<form method="post" action="\/portal\/signing-keys\/rotate"[\s\S]*name="csrf"[\s\S]*Create a signing key/,
    );
    const old = { ...key, id: 'whk_old', expires_at: '2026-03-10T09:00:00.000Z' };
    const two = bodyOf(
      overviewResult(session, { ok: true, result: { endpoint, hours: [], signing_keys: [old, key] } }),
    );
    expect(two).toContain(key.public_key);
    expect(two).toMatch(/signs until <time datetime="2026-03-10T09:00:00.000Z">10 Mar 2026/);
    expect(two).toContain('Replace the signing key');
  });

  it('the rotation’s page shows the keys after it, or the Problem', () => {
    const done = actionResult(session, 'rotate_signing_key', {
      ok: true,
      result: { action: 'rotate_signing_key', signing_keys: { data: [key] } },
    });
    expect(done.status).toBe(200);
    expect(bodyOf(done)).toContain(key.public_key);
    const refused = actionResult(session, 'rotate_signing_key', {
      ok: false,
      problem: { status: 409, code: 'webhook_not_registered', detail: 'No webhook URL is registered.' },
    });
    expect(refused.status).toBe(409);
  });
});

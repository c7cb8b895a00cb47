import { randomBytes } from 'node:crypto';
import type { ProblemBody } from '@svc/contracts';
import { request, type HttpResponse, expectProblem as expectGatewayProblem } from '../support/http';
import { eventually } from '../support/services';
import { startSystem, type RunningSystem } from '../support/system';

const PARTNER = `Basic ${Buffer.from('sandbox-partner:sandbox-secret').toString('base64')}`;
const INTERNAL = 'Bearer sandbox-internal-token';

interface Seat {
  readonly sponsorship_id: string;
  readonly email: string;
  readonly status: string;
  readonly crew_name: string | null;
}

/**
 * A sponsoring partner's afternoon, through the gateway with every app running as a process:
 * Basic credentials checked by auth-server, seats in sponsorship-api, premium in crew-api, and the
 * sign-up event travelling crew-api → RabbitMQ → sponsorship-api.
 */
describe('sponsorship API through the gateway', () => {
  let system: RunningSystem;
  const url = (path: string) => `${system.baseUrl}${path}`;
  const asPartner = (method: string, path: string, body?: unknown) =>
    request(url(path), {
      method,
      headers: {
        authorization: PARTNER,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      timeoutMs: 30_000,
    });

  beforeAll(async () => {
    system = await startSystem({ label: 'sponsorship' });
  }, 180_000);

  afterAll(async () => {
    await system?.stop();
  }, 60_000);

  const expectProblem = (res: HttpResponse, status: number, code: string): ProblemBody =>
    expectGatewayProblem(res, status, code, system.docsUrl);

  it('lists the sandbox seats with the rate-limit headers', async () => {
    const res = await asPartner('GET', '/v1/partners/sponsorships?limit=200');
    expect(res.status).toBe(200);
    const emails = res.json<{ items: Seat[] }>().items.map((s) => s.email);
    expect(emails).toEqual(
      expect.arrayContaining(['alex.morgan@sandbox.test', 'sam.lee@sandbox.test', 'invitee1@sandbox.test']),
    );
    expect(Number(res.header('x-ratelimit-limit'))).toBeGreaterThan(0);
    expect(res.header('x-ratelimit-remaining')).toMatch(/^\d+$/);
    expect(res.header('x-ratelimit-reset')).toMatch(/^\d+$/);
  });

  it('challenges a caller without credentials with the partners realm', async () => {
    const res = await request(url('/v1/partners/sponsorships'));
    expectProblem(res, 401, 'invalid_token');
    expect(res.header('www-authenticate')).toBe('Basic realm="partners"');
  });

  it('takes a reconcile body of several MiB (under the 5 MiB ceiling of that route)', async () => {
    const refs = Array.from(
      { length: 40_000 },
      (_, i) => `e2e-not-a-member-${i}-${'x'.repeat(60)}@example.test`,
    );
    refs.push('alex.morgan@sandbox.test', 'sam.lee@sandbox.test');
    const body = { active_refs: refs };
    expect(Buffer.byteLength(JSON.stringify(body))).toBeGreaterThan(3 * 1024 * 1024);
    const res = await asPartner('POST', '/v1/partners/sponsorships/reconcile', body);
    expect(res.status).toBe(200);
    const answer = res.json<{ applied: boolean; missing_refs: string[]; active_seats: number }>();
    expect(answer.applied).toBe(false);
    expect(answer.missing_refs).toHaveLength(40_000);
    expect(answer.active_seats).toBeGreaterThanOrEqual(2);
  });

  it('activates an invited seat when its crew member signs up, and member-left then drops the premium', async () => {
    const email = `e2e-${randomBytes(4).toString('hex')}@sandbox.test`;
    const provisioned = await asPartner('POST', '/v1/partners/sponsorships', { email, external_ref: email });
    expect(provisioned.status).toBe(201);
    const seat = provisioned.json<Seat>();
    expect(seat.status).toBe('invited');

    const signUp = await request(url('/internal/v1/crew'), {
      method: 'POST',
      headers: { authorization: INTERNAL, 'content-type': 'application/json' },
      body: JSON.stringify({ email, name: 'E2E Deckhand', role: 'Deckhand', country: 'NO' }),
    });
    expect(signUp.status).toBe(201);
    const userId = signUp.json<{ user_id: string }>().user_id;

    const active = await eventually(async () => {
      const res = await asPartner('GET', `/v1/partners/sponsorships/${seat.sponsorship_id}`);
      const body = res.json<Seat>();
      if (body.status !== 'active') throw new Error(`seat is ${body.status}`);
      return body;
    }, 20_000);
    // Active, but nameless: the new member has not connected this partner.
    expect(active.crew_name).toBeNull();

    const left = await asPartner('POST', '/v1/partners/members/left', {
      user_id: userId,
      reason: 'membership_lapsed',
    });
    expect(left.status).toBe(200);
    expect(left.json()).toEqual({ user_id: userId, ended: true, downgraded: true });
    const again = await asPartner('POST', '/v1/partners/members/left', { user_id: userId });
    expect(again.json()).toEqual({ user_id: userId, ended: false, downgraded: false });
  });
});

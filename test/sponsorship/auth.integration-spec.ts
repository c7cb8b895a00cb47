import { expectProblem, type HttpResponse } from '../support/http';
import { sha256Hex } from '@svc/platform';
import { freshEmail, seatCount, statusOf } from '../support/sponsorship';
import { createPartner } from '../support/app-factories';
import {
  PARTNER,
  PARTNER_B,
  startSponsorshipApi,
  SUSPENDED,
  type Credentials,
  type SponsorshipApiHarness,
  useSponsorshipStack,
} from '../support/starters/sponsorship-api';

const SEATS = '/v1/partners/sponsorships';
const CHALLENGE = 'Basic realm="partners"';

/** Every partner endpoint, with a body that would be accepted. */
const ENDPOINTS: readonly [string, string, unknown][] = [
  ['GET', SEATS, undefined],
  ['GET', `${SEATS}/sps_sandbox_invitee1`, undefined],
  ['POST', SEATS, { email: 'auth-probe@it.test' }],
  ['DELETE', `${SEATS}/sps_sandbox_invitee1`, undefined],
  ['POST', `${SEATS}/reconcile`, { active_refs: ['ext-1'] }],
  ['POST', '/v1/partners/members/left', { user_id: 'usr_nobody' }],
];

function expectUnauthorized(res: HttpResponse): void {
  expectProblem(res, 401, 'invalid_token');
  expect(res.header('www-authenticate')).toBe(CHALLENGE);
  // Not counted, so no rate-limit headers either.
  expect(res.header('x-ratelimit-remaining')).toBeUndefined();
}

describe('sponsorship-api: Basic authentication and the partner program', () => {
  const { auth, api } = useSponsorshipStack();

  describe('401 invalid_token with WWW-Authenticate: Basic realm="partners"', () => {
    it.each(ENDPOINTS)('%s %s without credentials', async (method, path, body) => {
      expectUnauthorized(await api.call(method, path, undefined, body));
    });

    it.each(ENDPOINTS)('%s %s with a wrong secret', async (method, path, body) => {
      expectUnauthorized(
        await api.call(method, path, { client_id: PARTNER.client_id, client_secret: 'not-the-secret' }, body),
      );
    });

    it.each([
      [
        'an unknown client_id',
        { authorization: `Basic ${Buffer.from('nobody:sandbox-secret').toString('base64')}` },
      ],
      ['a Bearer token', { authorization: 'Bearer x' }],
      [
        'a Bearer scheme carrying the Basic pair',
        { authorization: `Bearer ${Buffer.from('sandbox-partner:sandbox-secret').toString('base64')}` },
      ],
      ['a Basic value that is not base64', { authorization: 'Basic !!!not-base64!!!' }],
      [
        'a Basic pair without a colon',
        { authorization: `Basic ${Buffer.from('sandbox-partner').toString('base64')}` },
      ],
      [
        'the right secret with more after a second colon',
        { authorization: `Basic ${Buffer.from('sandbox-partner:sandbox-secret:extra').toString('base64')}` },
      ],
      ['an empty Basic value', { authorization: 'Basic ' }],
      ['an empty secret', { authorization: `Basic ${Buffer.from('sandbox-partner:').toString('base64')}` }],
    ])('with %s', async (_name, headers) => {
      expectUnauthorized(await api.call('GET', SEATS, undefined, undefined, headers));
    });

    it('lets the right credentials in (control)', async () => {
      expect(statusOf(await api.call('GET', SEATS, PARTNER))).toMatchObject({ status: 200 });
    });
  });

  describe('403 insufficient_scope', () => {
    it.each(ENDPOINTS)(
      '%s %s by a suspended partner (sandbox-partner-suspended)',
      async (method, path, body) => {
        const res = await api.call(method, path, SUSPENDED, body);
        expectProblem(res, 403, 'insufficient_scope');
        expect(res.header('x-ratelimit-limit')).toEqual(expect.any(String));
      },
    );

    it('creates nothing for a suspended partner', async () => {
      const email = freshEmail('suspended');
      expectProblem(await api.call('POST', SEATS, SUSPENDED, { email }), 403, 'insufficient_scope');
      expect(await seatCount(api.db, 'email = $1', [email])).toBe(0);
    });

    it('for a partner outside the sponsorship program', async () => {
      const outsider = await createPartner(api.auth, { sponsorship: false });
      expectProblem(await api.call('GET', SEATS, outsider), 403, 'insufficient_scope');
      expectProblem(
        await api.call('POST', SEATS, outsider, { email: freshEmail('outsider') }),
        403,
        'insufficient_scope',
      );
    });

    it('for member-left by a partner not flagged for it (sandbox-partner-b), though its seat endpoints work', async () => {
      expect((await api.call('GET', SEATS, PARTNER_B)).status).toBe(200);
      expectProblem(
        await api.call('POST', '/v1/partners/members/left', PARTNER_B, {
          user_id: 'usr_sandbox_alex_morgan',
        }),
        403,
        'insufficient_scope',
      );
      // alex.morgan's seat (of sandbox-partner) is untouched.
      expect((await api.call('GET', `${SEATS}/sps_sandbox_alex_morgan`, PARTNER)).json()).toMatchObject({
        status: 'active',
      });
    });
  });

  describe('credentials changed in auth-server', () => {
    async function refusedWithin(
      ms: number,
      probe: () => Promise<HttpResponse>,
      status: number,
    ): Promise<number> {
      const started = Date.now();
      for (;;) {
        const res = await probe();
        if (res.status === status) return Date.now() - started;
        expect(res.status).toBe(200);
        if (Date.now() - started > ms) throw new Error(`still ${res.status} after ${ms} ms`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }

    it('refuses a rotated secret within seconds (401), and the new secret works at once', async () => {
      const partner = await createPartner(api.auth, { sponsorship: true });
      expect((await api.call('GET', SEATS, partner)).status).toBe(200);
      const rotated: Credentials = {
        client_id: partner.client_id,
        client_secret: `${partner.client_secret}-rotated`,
      };
      await api.db.query(`UPDATE auth.partners SET secret_digest = $2 WHERE client_id = $1`, [
        partner.client_id,
        sha256Hex(rotated.client_secret),
      ]);
      expect((await api.call('GET', SEATS, rotated)).status).toBe(200);
      const after = await refusedWithin(7_000, () => api.call('GET', SEATS, partner), 401);
      expect(after).toBeLessThanOrEqual(7_000);
      expectUnauthorized(await api.call('GET', SEATS, partner));
    }, 15_000);

    it('refuses a partner suspended meanwhile within seconds (403)', async () => {
      const partner = await createPartner(api.auth, { sponsorship: true });
      expect((await api.call('GET', SEATS, partner)).status).toBe(200);
      await api.db.query(`UPDATE auth.partners SET suspended = true WHERE client_id = $1`, [
        partner.client_id,
      ]);
      await refusedWithin(7_000, () => api.call('GET', SEATS, partner), 403);
      expectProblem(await api.call('GET', SEATS, partner), 403, 'insufficient_scope');
    }, 15_000);
  });

  describe('rate limits (5 per minute on this instance)', () => {
    let limited: SponsorshipApiHarness;

    beforeAll(async () => {
      limited = await startSponsorshipApi(auth, { RATE_LIMIT_PER_MINUTE: '5' });
    }, 30_000);

    afterAll(async () => {
      await limited?.close();
    });

    function limits(res: HttpResponse) {
      return {
        limit: res.header('x-ratelimit-limit'),
        remaining: res.header('x-ratelimit-remaining'),
        reset: Number(res.header('x-ratelimit-reset')),
      };
    }

    it('carries the headers on every 200, does not count 401s, and answers the sixth call with 429 and Retry-After', async () => {
      const partner = await createPartner(limited.auth, { sponsorship: true, memberLeft: true });
      for (let i = 0; i < 3; i += 1) {
        expectUnauthorized(
          await limited.call('GET', SEATS, { client_id: partner.client_id, client_secret: 'wrong' }),
        );
      }
      const nowSeconds = Math.floor(Date.now() / 1000);
      const seen: string[] = [];
      for (let i = 0; i < 5; i += 1) {
        const res = await limited.call('GET', SEATS, partner);
        expect(res.status).toBe(200);
        const l = limits(res);
        expect(l.limit).toBe('5');
        expect(l.reset).toBeGreaterThanOrEqual(nowSeconds);
        // The oldest counted call frees its slot 60 s after it was made, which is no later than now.
        expect(l.reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 60);
        seen.push(l.remaining ?? '');
      }
      expect(seen).toEqual(['4', '3', '2', '1', '0']);

      const refused = await limited.call('GET', SEATS, partner);
      expectProblem(refused, 429, 'rate_limit_exceeded');
      expect(limits(refused)).toMatchObject({ limit: '5', remaining: '0' });
      const retryAfter = Number(refused.header('retry-after'));
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      // The bucket is per partner, not per endpoint.
      const email = freshEmail('limited');
      expectProblem(await limited.call('POST', SEATS, partner, { email }), 429, 'rate_limit_exceeded');
      expect(await seatCount(limited.db, 'email = $1', [email])).toBe(0);
      const reconcile = await limited.call('POST', `${SEATS}/reconcile`, partner, {
        active_refs: ['a@it.test'],
      });
      expectProblem(reconcile, 429, 'rate_limit_exceeded');
      expect(reconcile.header('retry-after')).toEqual(expect.any(String));
      const left = await limited.call('POST', '/v1/partners/members/left', partner, { user_id: 'usr_x' });
      expectProblem(left, 429, 'rate_limit_exceeded');
      expect(limits(left)).toMatchObject({ limit: '5', remaining: '0' });
    });

    it('counts a 403 and carries the headers on it', async () => {
      const suspended = await createPartner(limited.auth, { sponsorship: true, suspended: true });
      const first = await limited.call('GET', SEATS, suspended);
      expectProblem(first, 403, 'insufficient_scope');
      expect(limits(first)).toMatchObject({ limit: '5', remaining: '4' });
      const second = await limited.call('GET', SEATS, suspended);
      expect(limits(second)).toMatchObject({ remaining: '3' });
    });

    it('meters member-left like the seat endpoints (shared per-partner buckets)', async () => {
      const partner = await createPartner(limited.auth, { sponsorship: true, memberLeft: true });
      await limited.call('GET', SEATS, partner);
      const res = await limited.call('POST', '/v1/partners/members/left', partner, {
        user_id: 'usr_nobody_here',
      });
      expect(statusOf(res)).toMatchObject({ status: 200 });
      expect(limits(res)).toMatchObject({ limit: '5', remaining: '3' });
    });
  });
});

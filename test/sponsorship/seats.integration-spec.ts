import { request, expectInvalidFields, expectProblem } from '../support/http';
import { sample, scrape } from '../support/metrics';
import {
  freshEmail,
  membershipOf,
  registerMember,
  seatCount,
  seatEvents,
  seatOf,
  statusOf,
} from '../support/sponsorship';
import { createPartner } from '../support/app-factories';
import {
  basic,
  PARTNER,
  PARTNER_B,
  startSponsorshipApi,
  type Credentials,
  type SponsorshipApiHarness,
  useSponsorshipStack,
} from '../support/starters/sponsorship-api';

const SEATS = '/v1/partners/sponsorships';
const DAY_MS = 86_400_000;

describe('sponsorship seats: provision, get, remove', () => {
  const { auth, crew, api } = useSponsorshipStack();
  let partner: Credentials;
  let other: Credentials;

  beforeAll(async () => {
    partner = await createPartner(api.auth, { sponsorship: true });
    other = await createPartner(api.auth, { sponsorship: true });
  }, 60_000);

  const provision = (body: unknown, who: Credentials = partner) => api.call('POST', SEATS, who, body);

  describe('POST /v1/partners/sponsorships', () => {
    it('invites an e-mail no crew member has: 201, normalised, invited, default 12-month term, history kept', async () => {
      const email = freshEmail('invite');
      const before = Date.now();
      const res = await provision({ email: `  ${email.toUpperCase()} `, external_ref: 'hr-1001' });
      expect(statusOf(res)).toMatchObject({ status: 201 });
      const seat = seatOf(res);
      expect(Object.keys(seat).sort()).toEqual(
        [
          'activated_at',
          'crew_name',
          'email',
          'expires_at',
          'external_ref',
          'invited_at',
          'sponsorship_id',
          'status',
        ].sort(),
      );
      expect(seat).toMatchObject({
        email,
        status: 'invited',
        crew_name: null,
        activated_at: null,
        external_ref: 'hr-1001',
      });
      expect(seat.sponsorship_id).toMatch(/^sps_[A-Za-z0-9_-]+$/);
      expect(Date.parse(seat.invited_at ?? '')).toBeGreaterThanOrEqual(before - 1000);
      // Default term: 12 months from now (between 365 and 366 days).
      const term = Date.parse(seat.expires_at ?? '') - Date.parse(seat.invited_at ?? '');
      expect(term).toBeGreaterThan(364 * DAY_MS);
      expect(term).toBeLessThan(367 * DAY_MS);
      expect(await seatEvents(api.db, seat.sponsorship_id)).toEqual([
        { from_status: null, to_status: 'invited', actor: partner.client_id, reason: 'provisioned' },
      ]);

      const got = await api.call('GET', `${SEATS}/${seat.sponsorship_id}`, partner);
      expect(statusOf(got)).toMatchObject({ status: 200 });
      expect(seatOf(got)).toEqual(seat);
    });

    it('answers the live seat of an e-mail again with 200 and creates nothing (idempotent)', async () => {
      const email = freshEmail('again');
      const first = await provision({ email });
      expect(first.status).toBe(201);
      const again = await provision({ email: ` ${email.replace(/^./, (c) => c.toUpperCase())}` });
      expect(statusOf(again)).toMatchObject({ status: 200 });
      expect(seatOf(again)).toEqual(seatOf(first));
      expect(await seatCount(api.db, 'client_id = $1 AND email = $2', [partner.client_id, email])).toBe(1);
      expect(await seatEvents(api.db, seatOf(first).sponsorship_id)).toHaveLength(1);
    });

    it('creates one seat when the same e-mail is provisioned several times at once (one 201, the rest 200)', async () => {
      const member = await registerMember(crew, freshEmail('twice'));
      const answers = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          provision({ email: i % 2 ? member.email.toUpperCase() : member.email }),
        ),
      );
      expect(answers.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 201]);
      expect(new Set(answers.map((r) => seatOf(r).sponsorship_id)).size).toBe(1);
      expect(answers.every((r) => seatOf(r).status === 'active')).toBe(true);
      expect(
        await seatCount(api.db, 'client_id = $1 AND email = $2', [partner.client_id, member.email]),
      ).toBe(1);
      expect((await membershipOf(api.db, member.user_id)).sponsorship_id).toBe(
        seatOf(answers[0]).sponsorship_id,
      );
    });

    it("grants premium at once when the e-mail is a crew member's: 201 active, sponsored membership, no name before the member connects", async () => {
      const member = await registerMember(crew, freshEmail('member'), 'Rita Hansen');
      const expiresAt = new Date(Date.now() + 90 * DAY_MS);
      expiresAt.setUTCMilliseconds(0);
      const res = await provision({
        email: member.email.toUpperCase(),
        expires_at: expiresAt.toISOString(),
      });
      expect(statusOf(res)).toMatchObject({ status: 201 });
      const seat = seatOf(res);
      expect(seat).toMatchObject({
        email: member.email,
        status: 'active',
        // The member has not connected this partner: the address must not reveal who they are.
        crew_name: null,
        expires_at: expiresAt.toISOString(),
        external_ref: null,
      });
      expect(seat.activated_at).not.toBeNull();
      const membership = await membershipOf(api.db, member.user_id);
      expect(membership).toMatchObject({
        tier: 'premium',
        source: 'sponsored',
        sponsor_client_id: partner.client_id,
        sponsorship_id: seat.sponsorship_id,
      });
      expect(membership.expires_at?.toISOString()).toBe(expiresAt.toISOString());
      expect(await seatEvents(api.db, seat.sponsorship_id)).toEqual([
        { from_status: null, to_status: 'invited', actor: partner.client_id, reason: 'provisioned' },
        { from_status: 'invited', to_status: 'active', actor: partner.client_id, reason: 'member_found' },
      ]);
    });

    it('refuses a live external_ref on another e-mail with 409 conflict, and frees it once that seat is removed', async () => {
      const ref = `ref-${freshEmail('x')}`;
      const holder = await provision({ email: freshEmail('holder'), external_ref: ref });
      expect(holder.status).toBe(201);
      const otherEmail = freshEmail('taker');
      const taken = await provision({ email: otherEmail, external_ref: ref });
      expectProblem(taken, 409, 'conflict');
      expect(await seatCount(api.db, 'client_id = $1 AND email = $2', [partner.client_id, otherEmail])).toBe(
        0,
      );

      // Another partner's references are its own business.
      expect((await provision({ email: otherEmail, external_ref: ref }, other)).status).toBe(201);

      const removed = await api.call('DELETE', `${SEATS}/${seatOf(holder).sponsorship_id}`, partner);
      expect(seatOf(removed).status).toBe('cancelled');
      const now = await provision({ email: otherEmail, external_ref: ref });
      expect(statusOf(now)).toMatchObject({ status: 201 });
      expect(seatOf(now).external_ref).toBe(ref);
    });

    it('provisions a new seat for an e-mail whose earlier seat is closed', async () => {
      const email = freshEmail('reprovision');
      const first = seatOf(await provision({ email }));
      await api.call('DELETE', `${SEATS}/${first.sponsorship_id}`, partner);
      const second = await provision({ email });
      expect(statusOf(second)).toMatchObject({ status: 201 });
      expect(seatOf(second).sponsorship_id).not.toBe(first.sponsorship_id);
      expect(seatOf(second).status).toBe('invited');
    });

    it.each([
      ['no e-mail', {}, ['email']],
      ['a malformed e-mail', { email: 'not-an-email' }, ['email']],
      ['an e-mail that is not a string', { email: 42 }, ['email']],
      ['an unknown field', { email: 'ok@it.test', plan: 'gold' }, ['plan']],
      ['an external_ref that is not a string', { email: 'ok@it.test', external_ref: 7 }, ['external_ref']],
      [
        'an external_ref holding a NUL',
        { email: 'ok@it.test', external_ref: 'emp\u00001' },
        ['external_ref'],
      ],
      ['an e-mail holding a NUL', { email: 'ok\u0000@it.test' }, ['email']],
      // The description's own `format: email` refuses each of these (one definition, EMAIL_PATTERN).
      ['an e-mail with a non-ASCII letter', { email: '\u00ffalex.morgan@it.test' }, ['email']],
      ['an e-mail whose local part has two dots in a row', { email: 'a..b@it.test' }, ['email']],
      ['an e-mail whose domain label starts with a hyphen', { email: 'a@-it.test' }, ['email']],
      ['an e-mail whose domain holds an underscore', { email: 'a@it_x.test' }, ['email']],
      ['an e-mail with a quoted local part', { email: '"a b"@it.test' }, ['email']],
      ['an e-mail holding a lone surrogate', { email: 'a\udcff@it.test' }, ['email']],
      [
        'an external_ref holding a lone surrogate',
        { email: 'ok@it.test', external_ref: 'e\ud800' },
        ['external_ref'],
      ],
      [
        'expires_at that is not a timestamp',
        { email: 'ok@it.test', expires_at: 'next year' },
        ['expires_at'],
      ],
      ['expires_at in the past', { email: 'ok@it.test', expires_at: '2020-01-01T00:00:00Z' }, ['expires_at']],
      [
        'expires_at at the Unix epoch',
        { email: 'ok@it.test', expires_at: '1970-01-01T00:00:00Z' },
        ['expires_at'],
      ],
      [
        'expires_at more than 10 years ahead',
        { email: 'ok@it.test', expires_at: new Date(Date.now() + 11 * 365 * DAY_MS).toISOString() },
        ['expires_at'],
      ],
      ['two bad fields at once', { email: '', expires_at: 'soon' }, ['email', 'expires_at']],
    ])(
      'answers %s with 422 invalid_request naming the field, and creates no seat',
      async (_name, body, fields) => {
        const before = await seatCount(api.db, 'client_id = $1', [partner.client_id]);
        expectInvalidFields(await provision(body), fields);
        expect(await seatCount(api.db, 'client_id = $1', [partner.client_id])).toBe(before);
      },
    );

    it('answers a JSON body that is not UTF-8 with 400 bad_request and stores nothing (RFC 8259 §8.1)', async () => {
      const email = freshEmail('bytes');
      const before = await seatCount(api.db, 'client_id = $1', [partner.client_id]);
      // `\xff` + the address: decoded leniently it would become U+FFFD and be stored so.
      const body = Buffer.concat([Buffer.from('{"email":"'), Buffer.from([0xff]), Buffer.from(`${email}"}`)]);
      const res = await request(`${api.url}${SEATS}`, {
        method: 'POST',
        headers: { authorization: basic(partner), 'content-type': 'application/json' },
        body,
      });
      expect(expectProblem(res, 400, 'bad_request').detail).toMatch(/UTF-8/);
      expect(await seatCount(api.db, 'client_id = $1', [partner.client_id])).toBe(before);
      // The same address sent well-formed is provisioned, so the refusal was the byte's alone.
      expect(statusOf(await provision({ email }))).toMatchObject({ status: 201 });
    });

    it('answers a body that is not a JSON object with 422', async () => {
      expectInvalidFields(await provision(['ok@it.test']), ['body']);
    });
  });

  describe('GET /v1/partners/sponsorships/{id}', () => {
    it('shows sandbox-partner its seeded seat of alex.morgan, active', async () => {
      const res = await api.call('GET', `${SEATS}/sps_sandbox_alex_morgan`, PARTNER);
      expect(statusOf(res)).toMatchObject({ status: 200 });
      expect(seatOf(res)).toMatchObject({
        sponsorship_id: 'sps_sandbox_alex_morgan',
        email: 'alex.morgan@sandbox.test',
        status: 'active',
        external_ref: 'crew-alex',
      });
    });

    it("answers another partner's seat with 404 not_found, never 403", async () => {
      expectProblem(await api.call('GET', `${SEATS}/sps_sandbox_b_invitee1`, PARTNER), 404, 'not_found');
      expectProblem(await api.call('GET', `${SEATS}/sps_sandbox_alex_morgan`, PARTNER_B), 404, 'not_found');
      const mine = seatOf(await provision({ email: freshEmail('mine') }));
      expectProblem(await api.call('GET', `${SEATS}/${mine.sponsorship_id}`, other), 404, 'not_found');
    });

    it.each(['sps_does_not_exist', 'not-a-seat-id', 'sps_%27%20OR%201%3D1', `sps_${'a'.repeat(96)}`])(
      'answers the unknown or malformed id %s with 404 not_found',
      async (id) => {
        expectProblem(await api.call('GET', `${SEATS}/${id}`, partner), 404, 'not_found');
      },
    );
  });

  describe('DELETE /v1/partners/sponsorships/{id}', () => {
    it('cancels an invited seat; a second DELETE answers the same cancelled seat (idempotent)', async () => {
      const seat = seatOf(await provision({ email: freshEmail('remove') }));
      const res = await api.call('DELETE', `${SEATS}/${seat.sponsorship_id}`, partner);
      expect(statusOf(res)).toMatchObject({ status: 200 });
      const removed = seatOf(res);
      expect(removed).toMatchObject({
        sponsorship_id: seat.sponsorship_id,
        status: 'cancelled',
        email: seat.email,
      });
      const again = await api.call('DELETE', `${SEATS}/${seat.sponsorship_id}`, partner);
      expect(statusOf(again)).toMatchObject({ status: 200 });
      expect(seatOf(again)).toEqual(removed);
      expect(await seatEvents(api.db, seat.sponsorship_id)).toEqual([
        { from_status: null, to_status: 'invited', actor: partner.client_id, reason: 'provisioned' },
        { from_status: 'invited', to_status: 'cancelled', actor: partner.client_id, reason: 'removed' },
      ]);
      expect(seatOf(await api.call('GET', `${SEATS}/${seat.sponsorship_id}`, partner)).status).toBe(
        'cancelled',
      );
    });

    it('cancels an active seat and takes back the premium it gave (member back to free)', async () => {
      const member = await registerMember(crew, freshEmail('drop'));
      const seat = seatOf(await provision({ email: member.email }));
      expect(seat.status).toBe('active');
      const res = await api.call('DELETE', `${SEATS}/${seat.sponsorship_id}`, partner);
      expect(statusOf(res)).toMatchObject({ status: 200 });
      expect(seatOf(res).status).toBe('cancelled');
      expect(await membershipOf(api.db, member.user_id)).toMatchObject({
        tier: 'free',
        source: 'self',
        sponsorship_id: null,
        sponsor_client_id: null,
      });
      expect((await seatEvents(api.db, seat.sponsorship_id)).at(-1)).toEqual({
        from_status: 'active',
        to_status: 'cancelled',
        actor: partner.client_id,
        reason: 'removed',
      });
    });

    it("answers another partner's seat with 404 and leaves it live", async () => {
      const member = await registerMember(crew, freshEmail('keep'));
      const seat = seatOf(await provision({ email: member.email }, other));
      expectProblem(await api.call('DELETE', `${SEATS}/${seat.sponsorship_id}`, partner), 404, 'not_found');
      expect(seatOf(await api.call('GET', `${SEATS}/${seat.sponsorship_id}`, other)).status).toBe('active');
      expect((await membershipOf(api.db, member.user_id)).tier).toBe('premium');
    });

    it('answers an unknown or malformed id with 404', async () => {
      expectProblem(await api.call('DELETE', `${SEATS}/sps_nobody_has_this`, partner), 404, 'not_found');
      expectProblem(await api.call('DELETE', `${SEATS}/nope`, partner), 404, 'not_found');
    });
  });

  describe('sponsorship_seat_transitions_total on the metrics port', () => {
    const transitions = async () => {
      const text = await scrape(api.app);
      const of = (from: string, to: string) =>
        sample(text, 'sponsorship_seat_transitions_total', { app: 'sponsorship-api', from, to });
      return {
        invited: of('none', 'invited'),
        activated: of('invited', 'active'),
        activeCancelled: of('active', 'cancelled'),
        invitedCancelled: of('invited', 'cancelled'),
      };
    };

    it('counts each seat status change as it is recorded, from none for a new seat', async () => {
      const before = await transitions();
      // Every known transition has a series before it first happens.
      for (const value of Object.values(before)) expect(value).toEqual(expect.any(Number));

      const invited = seatOf(await provision({ email: freshEmail('metrics-invited') }));
      expect(invited.status).toBe('invited');
      const member = await registerMember(crew, freshEmail('metrics-member'));
      const active = seatOf(await provision({ email: member.email }));
      expect(active.status).toBe('active');
      // Answered again, not created: no transition.
      expect(statusOf(await provision({ email: member.email }))).toMatchObject({ status: 200 });
      for (const seat of [invited, active]) {
        const res = await api.call('DELETE', `${SEATS}/${seat.sponsorship_id}`, partner);
        expect(seatOf(res).status).toBe('cancelled');
      }

      expect(await transitions()).toEqual({
        invited: before.invited! + 2,
        activated: before.activated! + 1,
        activeCancelled: before.activeCancelled! + 1,
        invitedCancelled: before.invitedCancelled! + 1,
      });
    });
  });
  // Last: a second sponsorship-api in this process serves every app's Basic requests from its start on
  // (passport keeps one strategy of each name per process), so nothing runs after it closes.
  describe('seat quota', () => {
    let limited: SponsorshipApiHarness;
    let small: Credentials;

    beforeAll(async () => {
      limited = await startSponsorshipApi(auth, { SEAT_QUOTA: '2' });
      small = await createPartner(limited.auth, { sponsorship: true });
    }, 30_000);

    afterAll(async () => {
      await limited?.close();
    });

    it('refuses a live seat over the quota with 409 seat_quota_exceeded; a closed seat frees its place', async () => {
      const call = (body: unknown) => limited.call('POST', SEATS, small, body);
      const a = await call({ email: freshEmail('q1') });
      const b = await call({ email: freshEmail('q2') });
      expect([a.status, b.status]).toEqual([201, 201]);
      const over = freshEmail('q3');
      expectProblem(await call({ email: over }), 409, 'seat_quota_exceeded');
      expect(await seatCount(limited.db, 'client_id = $1 AND email = $2', [small.client_id, over])).toBe(0);
      // The e-mail of a live seat is still answered with its seat.
      expect((await call({ email: seatOf(a).email })).status).toBe(200);

      await limited.call('DELETE', `${SEATS}/${seatOf(a).sponsorship_id}`, small);
      expect(statusOf(await call({ email: over }))).toMatchObject({ status: 201 });
    });

    it('holds under concurrent provisions: never more live seats than the quota', async () => {
      const crowd = await createPartner(limited.auth, { sponsorship: true });
      const answers = await Promise.all(
        Array.from({ length: 6 }, () => limited.call('POST', SEATS, crowd, { email: freshEmail('rush') })),
      );
      const statuses = answers.map((r) => r.status).sort();
      expect(statuses).toEqual([201, 201, 409, 409, 409, 409]);
      expect(
        await seatCount(limited.db, `client_id = $1 AND status IN ('invited', 'active')`, [crowd.client_id]),
      ).toBe(2);
    });
  });
});

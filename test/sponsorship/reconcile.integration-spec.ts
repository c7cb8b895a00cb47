import { expectInvalidFields, expectProblem } from '../support/http';
import {
  fresh,
  freshEmail,
  insertInvitedSeats,
  membershipOf,
  registerMember,
  seatCount,
  seatEvents,
  seatIdOf,
  statusOf,
} from '../support/sponsorship';
import { createPartner } from '../support/app-factories';
import { type Credentials, useSponsorshipStack } from '../support/starters/sponsorship-api';

const RECONCILE = '/v1/partners/sponsorships/reconcile';

interface ReconcileBody {
  readonly active_seats: number;
  readonly applied: boolean;
  readonly cancelled_count: number;
  readonly missing_refs: string[];
  readonly threshold_exceeded: boolean;
  readonly to_cancel: { email: string; sponsorship_id: string }[];
}

describe('POST /v1/partners/sponsorships/reconcile', () => {
  const { crew, api } = useSponsorshipStack();

  /** A partner of its own with `count` invited seats; `email(i)` and `ref(i)` name seat i. */
  async function partnerWithSeats(count: number) {
    const partner = await createPartner(api.auth, { sponsorship: true });
    const tag = fresh('r');
    await insertInvitedSeats(api.db, partner.client_id, tag, count);
    const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, k) => from + k);
    return {
      partner,
      email: (i: number) => `${tag}-${i}@it.test`,
      ref: (i: number) => `${tag}-ref-${i}`,
      id: (i: number) => seatIdOf(tag, i),
      range,
    };
  }

  async function reconcile(partner: Credentials, body: unknown, instance = api): Promise<ReconcileBody> {
    const res = await instance.call('POST', RECONCILE, partner, body);
    expect(statusOf(res)).toMatchObject({ status: 200 });
    const answer = res.json<ReconcileBody>();
    expect(Object.keys(answer).sort()).toEqual(
      [
        'active_seats',
        'applied',
        'cancelled_count',
        'missing_refs',
        'threshold_exceeded',
        'to_cancel',
      ].sort(),
    );
    return answer;
  }

  const live = (partner: Credentials) =>
    seatCount(api.db, `client_id = $1 AND status IN ('invited', 'active')`, [partner.client_id]);

  it('is a dry run by default: the diff, nothing cancelled', async () => {
    const s = await partnerWithSeats(10);
    const answer = await reconcile(s.partner, { active_refs: s.range(1, 8).map(s.email) });
    expect(answer).toMatchObject({ active_seats: 10, applied: false, cancelled_count: 0, missing_refs: [] });
    expect(answer.to_cancel).toEqual(
      [9, 10]
        .map((i) => ({ email: s.email(i), sponsorship_id: s.id(i) }))
        .sort((a, b) => a.email.localeCompare(b.email)),
    );
    expect(await live(s.partner)).toBe(10);
    expect(await seatEvents(api.db, s.id(9))).toEqual([]);
    // apply: false is the same.
    expect(await reconcile(s.partner, { active_refs: s.range(1, 8).map(s.email), apply: false })).toEqual(
      answer,
    );
    expect(await live(s.partner)).toBe(10);
  });

  it('matches e-mails case-insensitively after trimming and external_refs exactly; missing_refs in first-occurrence order, once each', async () => {
    const s = await partnerWithSeats(6);
    const refs = [
      `  ${s.email(1).toUpperCase()}\t`, // seat 1 by e-mail
      s.ref(2), // seat 2 by external_ref
      s.ref(3).toUpperCase(), // no: external_ref is exact
      'nobody@it.test',
      ` ${s.ref(4)}`, // no: external_ref is exact (no trimming)
      'nobody@it.test',
      s.email(5),
      s.ref(6),
      s.email(6), // both of seat 6: matched once
      'zz-unknown',
    ];
    const answer = await reconcile(s.partner, { active_refs: refs });
    expect(answer.active_seats).toBe(6);
    expect(answer.to_cancel.map((c) => c.sponsorship_id).sort()).toEqual([s.id(3), s.id(4)]);
    expect(answer.missing_refs).toEqual([
      s.ref(3).toUpperCase(),
      'nobody@it.test',
      ` ${s.ref(4)}`,
      'zz-unknown',
    ]);
  });

  it('compares live seats only: closed seats are never cancelled again, and a ref matching only a closed seat is missing', async () => {
    const s = await partnerWithSeats(5);
    await api.db.query(
      `UPDATE sponsorship.seats SET status = 'cancelled', closed_at = now() WHERE sponsorship_id = ANY($1::text[])`,
      [[s.id(4), s.id(5)]],
    );
    const answer = await reconcile(s.partner, { active_refs: [...s.range(1, 3).map(s.email), s.ref(5)] });
    expect(answer).toMatchObject({ active_seats: 3, to_cancel: [], missing_refs: [s.ref(5)] });
  });

  describe('the guard: max(1, ceil(10 % of live seats)) unless max_cancel', () => {
    it('applies a diff exactly at the ceiling (10 seats, 1 to cancel)', async () => {
      const s = await partnerWithSeats(10);
      const answer = await reconcile(s.partner, { active_refs: s.range(1, 9).map(s.email), apply: true });
      expect(answer).toMatchObject({
        applied: true,
        threshold_exceeded: false,
        cancelled_count: 1,
        active_seats: 10,
      });
      expect(answer.to_cancel).toEqual([{ email: s.email(10), sponsorship_id: s.id(10) }]);
      expect(await live(s.partner)).toBe(9);
      expect(await seatEvents(api.db, s.id(10))).toEqual([
        { from_status: 'invited', to_status: 'cancelled', actor: s.partner.client_id, reason: 'reconcile' },
      ]);
    });

    it('refuses a diff over the ceiling with 200, applied false, threshold_exceeded true and the full diff', async () => {
      const s = await partnerWithSeats(10);
      const answer = await reconcile(s.partner, { active_refs: s.range(1, 8).map(s.email), apply: true });
      expect(answer).toMatchObject({
        applied: false,
        threshold_exceeded: true,
        cancelled_count: 0,
        active_seats: 10,
      });
      expect(answer.to_cancel.map((c) => c.sponsorship_id).sort()).toEqual([s.id(10), s.id(9)].sort());
      expect(await live(s.partner)).toBe(10);
    });

    it('rounds the 10 % up: 21 seats allow 3 cancellations, not 4', async () => {
      const ok = await partnerWithSeats(21);
      const at = await reconcile(ok.partner, { active_refs: ok.range(1, 18).map(ok.email), apply: true });
      expect(at).toMatchObject({ applied: true, threshold_exceeded: false, cancelled_count: 3 });
      const over = await partnerWithSeats(21);
      const past = await reconcile(over.partner, {
        active_refs: over.range(1, 17).map(over.email),
        apply: true,
      });
      expect(past).toMatchObject({ applied: false, threshold_exceeded: true, cancelled_count: 0 });
      expect(past.to_cancel).toHaveLength(4);
      expect(await live(over.partner)).toBe(21);
    });

    it('uses max_cancel as the ceiling when given: met applies, exceeded refuses, 0 refuses any cancellation', async () => {
      const s = await partnerWithSeats(10);
      const refs = s.range(1, 5).map(s.ref); // 5 to cancel, above the default ceiling of 1
      const over = await reconcile(s.partner, { active_refs: refs, apply: true, max_cancel: 4 });
      expect(over).toMatchObject({ applied: false, threshold_exceeded: true, cancelled_count: 0 });
      const zero = await reconcile(s.partner, { active_refs: refs, apply: true, max_cancel: 0 });
      expect(zero).toMatchObject({ applied: false, threshold_exceeded: true, cancelled_count: 0 });
      expect(await live(s.partner)).toBe(10);
      const met = await reconcile(s.partner, { active_refs: refs, apply: true, max_cancel: 5 });
      expect(met).toMatchObject({ applied: true, threshold_exceeded: false, cancelled_count: 5 });
      expect(await live(s.partner)).toBe(5);
      // Nothing left to cancel: max_cancel 0 is met.
      const none = await reconcile(s.partner, { active_refs: refs, apply: true, max_cancel: 0 });
      expect(none).toMatchObject({
        applied: true,
        threshold_exceeded: false,
        cancelled_count: 0,
        to_cancel: [],
      });
    });

    it('applies past the guard with override_threshold, still reporting threshold_exceeded', async () => {
      const s = await partnerWithSeats(10);
      const answer = await reconcile(s.partner, {
        active_refs: s.range(1, 6).map(s.email),
        apply: true,
        override_threshold: true,
      });
      expect(answer).toMatchObject({ applied: true, threshold_exceeded: true, cancelled_count: 4 });
      expect(await live(s.partner)).toBe(6);
      // A repeat finds nothing more to cancel.
      const again = await reconcile(s.partner, { active_refs: s.range(1, 6).map(s.email), apply: true });
      expect(again).toMatchObject({ applied: true, cancelled_count: 0, to_cancel: [], active_seats: 6 });
    });

    it('override_threshold without apply stays a dry run', async () => {
      const s = await partnerWithSeats(4);
      const answer = await reconcile(s.partner, { active_refs: [s.email(1)], override_threshold: true });
      expect(answer).toMatchObject({ applied: false, cancelled_count: 0 });
      expect(answer.to_cancel).toHaveLength(3);
      expect(await live(s.partner)).toBe(4);
    });
  });

  it('drops the premium of an active seat it cancels', async () => {
    const partner = await createPartner(api.auth, { sponsorship: true });
    const member = await registerMember(crew, freshEmail('reconciled'));
    const kept = await registerMember(crew, freshEmail('kept'));
    const gone = (
      await api.call('POST', '/v1/partners/sponsorships', partner, { email: member.email })
    ).json<{
      sponsorship_id: string;
      status: string;
    }>();
    const stays = (
      await api.call('POST', '/v1/partners/sponsorships', partner, {
        email: kept.email,
        external_ref: 'kept-1',
      })
    ).json<{ sponsorship_id: string; status: string }>();
    expect([gone.status, stays.status]).toEqual(['active', 'active']);
    const answer = await reconcile(partner, {
      active_refs: ['kept-1'],
      apply: true,
      override_threshold: true,
    });
    expect(answer).toMatchObject({ applied: true, cancelled_count: 1 });
    expect(answer.to_cancel).toEqual([{ email: member.email, sponsorship_id: gone.sponsorship_id }]);
    expect(await membershipOf(api.db, member.user_id)).toMatchObject({
      tier: 'free',
      source: 'self',
      sponsorship_id: null,
    });
    expect(await membershipOf(api.db, kept.user_id)).toMatchObject({
      tier: 'premium',
      source: 'sponsored',
      sponsorship_id: stays.sponsorship_id,
    });
    expect((await seatEvents(api.db, gone.sponsorship_id)).at(-1)).toEqual({
      from_status: 'active',
      to_status: 'cancelled',
      actor: partner.client_id,
      reason: 'reconcile',
    });
  });

  describe('bad requests change nothing', () => {
    let s: Awaited<ReturnType<typeof partnerWithSeats>>;

    beforeAll(async () => {
      s = await partnerWithSeats(3);
    });

    afterEach(async () => {
      expect(await live(s.partner)).toBe(3);
    });

    it('answers an empty active_refs with 400 bad_request, even with apply and override', async () => {
      const res = await api.call('POST', RECONCILE, s.partner, {
        active_refs: [],
        apply: true,
        override_threshold: true,
      });
      const problem = expectProblem(res, 400, 'bad_request');
      expect(problem.errors).toBeUndefined();
    });

    it.each([
      ['no active_refs', { apply: true }, ['active_refs']],
      ['active_refs that is not an array', { active_refs: 'a@it.test', apply: true }, ['active_refs']],
      ['active_refs that is an object', { active_refs: { 0: 'a@it.test' } }, ['active_refs']],
      ['an empty entry', { active_refs: ['a@it.test', ''], apply: true }, ['active_refs[1]']],
      ['a blank entry', { active_refs: ['   '], apply: true }, ['active_refs[0]']],
      ['an entry over 320 characters', { active_refs: ['x'.repeat(321)], apply: true }, ['active_refs[0]']],
      ['a number entry', { active_refs: ['a@it.test', 5], apply: true }, ['active_refs[1]']],
      ['a null entry', { active_refs: [null], apply: true }, ['active_refs[0]']],
      ['an unknown field', { active_refs: ['a@it.test'], dry_run: false }, ['dry_run']],
      ['apply that is not a boolean', { active_refs: ['a@it.test'], apply: 'yes' }, ['apply']],
      ['a negative max_cancel', { active_refs: ['a@it.test'], max_cancel: -1 }, ['max_cancel']],
      ['a fractional max_cancel', { active_refs: ['a@it.test'], max_cancel: 1.5 }, ['max_cancel']],
      [
        'override_threshold as a string',
        { active_refs: ['a@it.test'], override_threshold: 'true' },
        ['override_threshold'],
      ],
    ])('answers %s with 422 naming the field', async (_name, body, fields) => {
      expectInvalidFields(await api.call('POST', RECONCILE, s.partner, body), fields);
    });

    it('answers more than 50,000 entries with 422 naming active_refs', async () => {
      const refs = Array.from({ length: 50_001 }, (_, i) => `r${i}`);
      expectInvalidFields(await api.call('POST', RECONCILE, s.partner, { active_refs: refs, apply: true }), [
        'active_refs',
      ]);
    });

    it('accepts an entry of exactly 320 characters', async () => {
      const answer = await reconcile(s.partner, {
        active_refs: ['y'.repeat(320), ...s.range(1, 3).map(s.ref)],
      });
      expect(answer).toMatchObject({ to_cancel: [], missing_refs: ['y'.repeat(320)] });
    });

    it('takes 50,000 entries in a body over 1 MiB (its limit is 5 MiB) and refuses a larger body with 413', async () => {
      const big = Array.from(
        { length: 50_000 },
        (_, i) => `member-${String(i).padStart(6, '0')}@partner-export.example`,
      );
      expect(Buffer.byteLength(JSON.stringify({ active_refs: big }))).toBeGreaterThan(1024 * 1024);
      const answer = await reconcile(s.partner, {
        active_refs: [...big.slice(0, 49_997), ...s.range(1, 3).map(s.ref)],
      });
      expect(answer).toMatchObject({ active_seats: 3, to_cancel: [] });
      expect(answer.missing_refs).toHaveLength(49_997);

      const huge = Array.from({ length: 20_000 }, () => 'z'.repeat(300)); // about 6 MB
      expectProblem(
        await api.call('POST', RECONCILE, s.partner, { active_refs: huge, apply: true }),
        413,
        'payload_too_large',
      );
    }, 30_000);

    it('answers a body that is not JSON with 415, and malformed JSON with 400', async () => {
      expectProblem(
        await api.call('POST', RECONCILE, s.partner, 'active_refs=a', {
          'content-type': 'application/x-www-form-urlencoded',
        }),
        415,
        'unsupported_media_type',
      );
      expectProblem(await api.call('POST', RECONCILE, s.partner, '{"active_refs": ['), 400, 'bad_request');
    });

    it('names many bad entries in a bounded errors list', async () => {
      const res = await api.call('POST', RECONCILE, s.partner, {
        active_refs: Array.from({ length: 500 }, () => ''),
      });
      const body = expectProblem(res, 422, 'invalid_request');
      expect(body.errors?.length).toBeGreaterThan(1);
      expect(body.errors?.length).toBeLessThanOrEqual(50);
      expect(body.errors?.[0]).toMatchObject({ field: 'active_refs[0]' });
    });
  });

  it('diffs 10,000 seats against 10,000 refs exactly, then applies it', async () => {
    const s = await partnerWithSeats(10_000);
    const dropped = new Set(s.range(1, 10_000).filter((i) => i % 100 === 0)); // 100 seats the partner no longer has
    const unknown = s.range(1, 100).map((i) => `unknown-${i}@it.test`);
    // The 9,900 kept seats (odd ones by upper-cased e-mail, even ones by external_ref), with the
    // unknown refs spread among them.
    const refs: string[] = [];
    let k = 0;
    for (let i = 1; i <= 10_000; i += 1) {
      if (dropped.has(i)) continue;
      refs.push(i % 2 === 1 ? s.email(i).toUpperCase() : s.ref(i));
      if (refs.length % 100 === 99 && k < unknown.length) refs.push(unknown[k++]);
    }
    refs.push(...unknown.slice(k));
    expect(refs).toHaveLength(10_000);
    const expectedMissing = refs.filter((r) => r.startsWith('unknown-'));
    expect(expectedMissing).toHaveLength(100);

    const started = Date.now();
    const dry = await reconcile(s.partner, { active_refs: refs });
    const dryMs = Date.now() - started;
    expect(dry).toMatchObject({
      active_seats: 10_000,
      applied: false,
      cancelled_count: 0,
      threshold_exceeded: false,
    });
    expect(dry.to_cancel.map((c) => c.sponsorship_id).sort()).toEqual([...dropped].map(s.id).sort());
    expect(new Set(dry.to_cancel.map((c) => c.email))).toEqual(new Set([...dropped].map(s.email)));
    expect(dry.missing_refs).toEqual(expectedMissing);
    expect(dryMs).toBeLessThan(10_000);

    const applied = await reconcile(s.partner, { active_refs: refs, apply: true });
    expect(applied).toMatchObject({ applied: true, cancelled_count: 100, threshold_exceeded: false });
    expect(await live(s.partner)).toBe(9_900);
    const { rows } = await api.db.query<{ n: string }>(
      `SELECT count(*) AS n FROM sponsorship.seat_events e JOIN sponsorship.seats s USING (sponsorship_id)
        WHERE s.client_id = $1 AND e.reason = 'reconcile' AND e.to_status = 'cancelled'`,
      [s.partner.client_id],
    );
    expect(Number(rows[0].n)).toBe(100);

    const after = await reconcile(s.partner, { active_refs: refs });
    expect(after).toMatchObject({ active_seats: 9_900, to_cancel: [], missing_refs: expectedMissing });
  }, 60_000);
});

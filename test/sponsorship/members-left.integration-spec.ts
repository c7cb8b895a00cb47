import type { CrewApiHarness } from '../support/starters/crew-api';
import { expectInvalidFields, expectProblem } from '../support/http';
import {
  freshEmail,
  membershipOf,
  registerMember,
  seatEvents,
  seatOf,
  statusOf,
  type Member,
  type SeatBody,
} from '../support/sponsorship';
import { createPartner } from '../support/app-factories';
import {
  PARTNER,
  type Credentials,
  type SponsorshipApiHarness,
  startSponsorshipStack,
  type SponsorshipStack,
} from '../support/starters/sponsorship-api';

const LEFT = '/v1/partners/members/left';
const SEATS = '/v1/partners/sponsorships';

interface LeftBody {
  readonly user_id: string;
  readonly ended: boolean;
  readonly downgraded: boolean;
}

describe('POST /v1/partners/members/left', () => {
  let crew: CrewApiHarness;
  let api: SponsorshipApiHarness;
  let stack: SponsorshipStack | undefined;
  /** A partner flagged for member-left, of these tests alone. */
  let flagged: Credentials;

  beforeAll(async () => {
    stack = await startSponsorshipStack();
    ({ crew, api } = stack);
    flagged = await createPartner(api.auth, { sponsorship: true, memberLeft: true });
  }, 60_000);

  afterAll(async () => {
    // sam.lee's sandbox seat, closed by one test, is live again for the other spec files of the run.
    await api?.db.query(
      `DELETE FROM sponsorship.seat_events WHERE sponsorship_id = 'sps_sandbox_sam_lee' AND reason LIKE 'member_left:%'`,
    );
    await api?.db.query(
      `UPDATE sponsorship.seats SET status = 'active', closed_at = NULL WHERE sponsorship_id = 'sps_sandbox_sam_lee'`,
    );
    await stack?.close();
  });

  async function left(body: unknown, who: Credentials = flagged): Promise<LeftBody> {
    const res = await api.call('POST', LEFT, who, body);
    expect(statusOf(res)).toMatchObject({ status: 200 });
    const answer = res.json<LeftBody>();
    expect(Object.keys(answer).sort()).toEqual(['downgraded', 'ended', 'user_id']);
    return answer;
  }

  /** A new crew member with premium through an active seat of `who`. */
  async function sponsored(
    who: Credentials = flagged,
    externalRef?: string,
  ): Promise<{ member: Member; seat: SeatBody }> {
    const member = await registerMember(crew, freshEmail('left'));
    const res = await api.call('POST', SEATS, who, {
      email: member.email,
      external_ref: externalRef ?? null,
    });
    expect(statusOf(res)).toMatchObject({ status: 201 });
    const seat = seatOf(res);
    expect(seat.status).toBe('active');
    return { member, seat };
  }

  const seatStatus = async (id: string, who: Credentials = flagged) =>
    seatOf(await api.call('GET', `${SEATS}/${id}`, who)).status;

  it('closes the active seat of a sponsored member: ended and downgraded, premium dropped, history kept', async () => {
    const { member, seat } = await sponsored();
    expect(await left({ user_id: member.user_id, reason: 'account_deleted' })).toEqual({
      user_id: member.user_id,
      ended: true,
      downgraded: true,
    });
    expect(await seatStatus(seat.sponsorship_id)).toBe('ended');
    expect(await membershipOf(api.db, member.user_id)).toMatchObject({
      tier: 'free',
      source: 'self',
      sponsorship_id: null,
    });
    expect((await seatEvents(api.db, seat.sponsorship_id)).at(-1)).toEqual({
      from_status: 'active',
      to_status: 'ended',
      actor: flagged.client_id,
      reason: 'member_left:account_deleted',
    });
  });

  it('is idempotent: the same call again answers 200 with ended false and changes nothing', async () => {
    const { member, seat } = await sponsored();
    expect((await left({ user_id: member.user_id })).ended).toBe(true);
    const events = await seatEvents(api.db, seat.sponsorship_id);
    expect(await left({ user_id: member.user_id, reason: 'membership_lapsed' })).toEqual({
      user_id: member.user_id,
      ended: false,
      downgraded: false,
    });
    expect(await seatEvents(api.db, seat.sponsorship_id)).toEqual(events);
    expect(await seatStatus(seat.sponsorship_id)).toBe('ended');
  });

  it('reports the drop again when retried after its own commit failed (premium already dropped)', async () => {
    const { member, seat } = await sponsored();
    // The seat's history insert fails after crew-api has dropped premium: the seat stays active.
    const fn = `fail_${seat.sponsorship_id.replace(/[^a-z0-9_]/gi, '_')}`;
    await api.db.query(
      `CREATE FUNCTION sponsorship.${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF NEW.sponsorship_id = '${seat.sponsorship_id}' THEN RAISE EXCEPTION 'history write refused by the test'; END IF;
         RETURN NEW;
       END $$`,
    );
    await api.db.query(
      `CREATE TRIGGER ${fn} BEFORE INSERT ON sponsorship.seat_events FOR EACH ROW EXECUTE FUNCTION sponsorship.${fn}()`,
    );
    try {
      const failed = await api.call('POST', LEFT, flagged, { user_id: member.user_id });
      expect(failed.status).toBeGreaterThanOrEqual(500);
    } finally {
      await api.db.query(`DROP TRIGGER ${fn} ON sponsorship.seat_events`);
      await api.db.query(`DROP FUNCTION sponsorship.${fn}()`);
    }
    expect(await seatStatus(seat.sponsorship_id)).toBe('active');
    expect(await membershipOf(api.db, member.user_id)).toMatchObject({ tier: 'free', source: 'self' });

    expect(await left({ user_id: member.user_id })).toEqual({
      user_id: member.user_id,
      ended: true,
      downgraded: true,
    });
    expect(await seatStatus(seat.sponsorship_id)).toBe('ended');
  });

  it('finds the member by external_ref when user_id is omitted (or null), also once the seat is closed', async () => {
    const ref = `hr-${freshEmail('ref')}`;
    const { member, seat } = await sponsored(flagged, ref);
    expect(await left({ user_id: null, external_ref: ref, reason: 'membership_lapsed' })).toEqual({
      user_id: member.user_id,
      ended: true,
      downgraded: true,
    });
    expect(await seatStatus(seat.sponsorship_id)).toBe('ended');
    expect(await left({ external_ref: ref })).toEqual({
      user_id: member.user_id,
      ended: false,
      downgraded: false,
    });
  });

  it('prefers user_id over external_ref', async () => {
    const a = await sponsored();
    const refB = `hr-${freshEmail('b')}`;
    const b = await sponsored(flagged, refB);
    expect(await left({ user_id: a.member.user_id, external_ref: refB })).toMatchObject({
      user_id: a.member.user_id,
      ended: true,
    });
    expect(await seatStatus(a.seat.sponsorship_id)).toBe('ended');
    expect(await seatStatus(b.seat.sponsorship_id)).toBe('active');
    expect((await membershipOf(api.db, b.member.user_id)).tier).toBe('premium');
  });

  it('answers an unknown user_id with 200, ended false, downgraded false', async () => {
    expect(await left({ user_id: 'usr_nobody_by_this_id' })).toEqual({
      user_id: 'usr_nobody_by_this_id',
      ended: false,
      downgraded: false,
    });
  });

  it("never closes another partner's seat of the member", async () => {
    const elsewhere = await createPartner(api.auth, { sponsorship: true });
    const { member, seat } = await sponsored(elsewhere);
    expect(await left({ user_id: member.user_id })).toEqual({
      user_id: member.user_id,
      ended: false,
      downgraded: false,
    });
    expect(await seatStatus(seat.sponsorship_id, elsewhere)).toBe('active');
    expect((await membershipOf(api.db, member.user_id)).sponsorship_id).toBe(seat.sponsorship_id);
  });

  it('answers ended false for a seat the partner removed earlier (cancelled is final)', async () => {
    const { member, seat } = await sponsored();
    expect(seatOf(await api.call('DELETE', `${SEATS}/${seat.sponsorship_id}`, flagged)).status).toBe(
      'cancelled',
    );
    expect(await left({ user_id: member.user_id })).toEqual({
      user_id: member.user_id,
      ended: false,
      downgraded: false,
    });
    expect(await seatStatus(seat.sponsorship_id)).toBe('cancelled');
  });

  it('ends the seat without downgrading when the premium is not this seat’s (another partner sponsors the member)', async () => {
    const first = await createPartner(api.auth, { sponsorship: true });
    const { member, seat: firstSeat } = await sponsored(first);
    const res = await api.call('POST', SEATS, flagged, { email: member.email });
    expect(statusOf(res)).toMatchObject({ status: 201 });
    const second = seatOf(res);
    expect(second.status).toBe('active');
    expect(await left({ user_id: member.user_id })).toEqual({
      user_id: member.user_id,
      ended: true,
      downgraded: false,
    });
    expect(await membershipOf(api.db, member.user_id)).toMatchObject({
      tier: 'premium',
      source: 'sponsored',
      sponsorship_id: firstSeat.sponsorship_id,
    });
  });

  it('sam.lee (self-paid premium, active seat of sandbox-partner): ended true, downgraded false, still premium', async () => {
    const before = await membershipOf(api.db, 'usr_sandbox_sam_lee');
    expect(before).toMatchObject({ tier: 'premium', source: 'self' });
    expect(await left({ user_id: 'usr_sandbox_sam_lee', reason: 'membership_lapsed' }, PARTNER)).toEqual({
      user_id: 'usr_sandbox_sam_lee',
      ended: true,
      downgraded: false,
    });
    expect(await seatStatus('sps_sandbox_sam_lee', PARTNER)).toBe('ended');
    expect(await membershipOf(api.db, 'usr_sandbox_sam_lee')).toMatchObject({
      tier: 'premium',
      source: 'self',
    });
    expect((await left({ user_id: 'usr_sandbox_sam_lee' }, PARTNER)).ended).toBe(false);
  });

  it('closes the seat once when 10 calls for one member arrive together', async () => {
    const ref = `hr-${freshEmail('race')}`;
    const { member, seat } = await sponsored(flagged, ref);
    const bodies = Array.from({ length: 10 }, (_, i) =>
      i % 2 === 0 ? { user_id: member.user_id, reason: 'account_deleted' } : { external_ref: ref },
    );
    const answers = await Promise.all(bodies.map((b) => api.call('POST', LEFT, flagged, b)));
    expect(answers.map((r) => r.status)).toEqual(Array(10).fill(200));
    const bodiesBack = answers.map((r) => r.json<LeftBody>());
    expect(bodiesBack.filter((b) => b.ended)).toHaveLength(1);
    expect(bodiesBack.filter((b) => b.downgraded)).toHaveLength(1);
    expect(bodiesBack.every((b) => b.user_id === member.user_id)).toBe(true);
    const ended = (await seatEvents(api.db, seat.sponsorship_id)).filter((e) => e.to_status === 'ended');
    expect(ended).toHaveLength(1);
    expect(await membershipOf(api.db, member.user_id)).toMatchObject({ tier: 'free', source: 'self' });
  });

  describe('400 bad_request: nobody identified', () => {
    it.each([
      ['an empty body', {}],
      ['both fields null', { user_id: null, external_ref: null }],
      ['only a reason', { reason: 'account_deleted' }],
      ['an external_ref no seat has', { external_ref: 'no-such-ref' }],
    ])('%s', async (_name, body) => {
      const problem = expectProblem(await api.call('POST', LEFT, flagged, body), 400, 'bad_request');
      expect(problem.errors).toBeUndefined();
    });

    it('an external_ref whose seat has no crew member yet (invited)', async () => {
      const ref = `inv-${freshEmail('invited')}`;
      const invited = await api.call('POST', SEATS, flagged, {
        email: freshEmail('nobody-yet'),
        external_ref: ref,
      });
      expect(seatOf(invited).status).toBe('invited');
      expectProblem(await api.call('POST', LEFT, flagged, { external_ref: ref }), 400, 'bad_request');
      expect(await seatStatus(seatOf(invited).sponsorship_id)).toBe('invited');
    });
  });

  describe('422 invalid_request', () => {
    it.each([
      ['an unknown reason', { user_id: 'usr_x', reason: 'quit' }, ['reason']],
      ['a reason that is not a string', { user_id: 'usr_x', reason: 1 }, ['reason']],
      ['an unknown field', { user_id: 'usr_x', email: 'a@it.test' }, ['email']],
      ['a user_id that is not a string', { user_id: 42 }, ['user_id']],
      ['an empty user_id', { user_id: '' }, ['user_id']],
      ['an external_ref that is not a string', { external_ref: ['a'] }, ['external_ref']],
    ])('%s', async (_name, body, fields) => {
      expectInvalidFields(await api.call('POST', LEFT, flagged, body), fields);
    });

    it('a body that is not a JSON object', async () => {
      expectInvalidFields(await api.call('POST', LEFT, flagged, ['usr_x']), ['body']);
    });
  });
});

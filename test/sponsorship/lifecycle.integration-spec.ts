import { eventually } from '../support/services';
import {
  fresh,
  freshEmail,
  insertInvitedSeats,
  membershipOf,
  registerMember,
  seatEvents,
  seatIdOf,
  seatOf,
  statusOf,
  type SeatBody,
} from '../support/sponsorship';
import { createPartner } from '../support/app-factories';
import {
  startSponsorshipApi,
  type Credentials,
  useSponsorshipStack,
} from '../support/starters/sponsorship-api';

const SEATS = '/v1/partners/sponsorships';

describe('seat lifecycle: activation on sign-up and expiry', () => {
  const { auth, crew, api } = useSponsorshipStack();
  let partner: Credentials;

  beforeAll(async () => {
    partner = await createPartner(api.auth, { sponsorship: true, memberLeft: true });
  }, 60_000);

  async function provision(email: string, who: Credentials = partner, extra: object = {}): Promise<SeatBody> {
    const res = await api.call('POST', SEATS, who, { email, ...extra });
    expect(statusOf(res)).toMatchObject({ status: 201 });
    return seatOf(res);
  }

  const getSeat = async (id: string, who: Credentials = partner) =>
    seatOf(await api.call('GET', `${SEATS}/${id}`, who));

  /** Moves a seat's term (and the premium's, when it gave one) into the past. */
  async function makeDue(ids: readonly string[]): Promise<void> {
    await api.db.query(
      `UPDATE sponsorship.seats SET expires_at = now() - interval '1 minute' WHERE sponsorship_id = ANY($1::text[])`,
      [ids],
    );
  }

  describe('invited → active when a crew member with that e-mail signs up', () => {
    it('activates the invitation and grants premium, within seconds of the sign-up', async () => {
      const email = freshEmail('signup');
      const seat = await provision(email);
      expect(seat).toMatchObject({ status: 'invited', crew_name: null, activated_at: null });
      const member = await registerMember(crew, email, 'Nia Okafor');
      // The invited seat becomes active.
      const active = await eventually(async () => {
        const s = await getSeat(seat.sponsorship_id);
        return s.status === 'active' ? s : undefined;
      }, 10_000);
      // Active, but nameless: the member has not connected this partner (crew-names spec).
      expect(active).toMatchObject({ crew_name: null, email });
      expect(active.activated_at).not.toBeNull();
      expect(await membershipOf(api.db, member.user_id)).toMatchObject({
        tier: 'premium',
        source: 'sponsored',
        sponsor_client_id: partner.client_id,
        sponsorship_id: seat.sponsorship_id,
      });
      expect((await seatEvents(api.db, seat.sponsorship_id)).at(-1)).toEqual({
        from_status: 'invited',
        to_status: 'active',
        actor: 'system',
        reason: 'member_registered',
      });
    }, 20_000);

    it('activates the oldest invitation only; a cancelled or expired one stays closed', async () => {
      const email = freshEmail('contested');
      const [a, b, c] = [
        await createPartner(api.auth, { sponsorship: true }),
        await createPartner(api.auth, { sponsorship: true }),
        await createPartner(api.auth, { sponsorship: true }),
      ];
      const cancelled = await provision(email, a);
      await api.call('DELETE', `${SEATS}/${cancelled.sponsorship_id}`, a);
      const expired = await provision(email, c);
      await makeDue([expired.sponsorship_id]);
      const oldest = await provision(email, b);
      const younger = await provision(email, partner);
      const member = await registerMember(crew, email);
      // The oldest live invitation (b's) becomes active.
      await eventually(
        async () => ((await getSeat(oldest.sponsorship_id, b)).status === 'active' ? true : undefined),
        10_000,
      );
      expect((await getSeat(younger.sponsorship_id)).status).toBe('invited');
      expect((await getSeat(cancelled.sponsorship_id, a)).status).toBe('cancelled');
      expect((await getSeat(expired.sponsorship_id, c)).status).toBe('invited');
      expect((await membershipOf(api.db, member.user_id)).sponsorship_id).toBe(oldest.sponsorship_id);
      // The expiry job then closes the invitation that ran out without a member.
      await api.expireDueSeats();
      expect((await getSeat(expired.sponsorship_id, c)).status).toBe('cancelled');
    }, 20_000);
  });

  describe('ended and cancelled are final', () => {
    it('an ended seat stays ended through DELETE, member-left, reconcile and the expiry job', async () => {
      const own = await createPartner(api.auth, { sponsorship: true, memberLeft: true });
      const member = await registerMember(crew, freshEmail('final'));
      const seat = await provision(member.email, own, { external_ref: `final-${fresh('')}` });
      await makeDue([seat.sponsorship_id]);
      await api.expireDueSeats();
      expect((await getSeat(seat.sponsorship_id, own)).status).toBe('ended');
      const history = await seatEvents(api.db, seat.sponsorship_id);

      const removed = await api.call('DELETE', `${SEATS}/${seat.sponsorship_id}`, own);
      expect(statusOf(removed)).toMatchObject({ status: 200 });
      expect(seatOf(removed).status).toBe('ended');
      const leftRes = await api.call('POST', '/v1/partners/members/left', own, { user_id: member.user_id });
      expect(leftRes.json()).toEqual({ user_id: member.user_id, ended: false, downgraded: false });
      const rec = await api.call('POST', `${SEATS}/reconcile`, own, {
        active_refs: ['someone-else@it.test'],
        apply: true,
        override_threshold: true,
      });
      expect(
        rec.json<{ to_cancel: { sponsorship_id: string }[] }>().to_cancel.map((c) => c.sponsorship_id),
      ).not.toContain(seat.sponsorship_id);
      await api.expireDueSeats();
      expect((await getSeat(seat.sponsorship_id, own)).status).toBe('ended');
      expect(await seatEvents(api.db, seat.sponsorship_id)).toEqual(history);
    });
  });

  // Last: its second sponsorship-api serves every app's Basic requests from its start on (passport
  // keeps one strategy of each name per process), so nothing runs after it closes.
  describe('expiry at expires_at', () => {
    it('ends an active seat (premium dropped) and cancels an invitation nobody took up; history says system/expired', async () => {
      const member = await registerMember(crew, freshEmail('expiring'));
      const active = await provision(member.email);
      const invited = await provision(freshEmail('never-joined'));
      expect([active.status, invited.status]).toEqual(['active', 'invited']);
      await makeDue([active.sponsorship_id, invited.sponsorship_id]);

      expect(await api.expireDueSeats()).toBeGreaterThanOrEqual(2);
      expect((await getSeat(active.sponsorship_id)).status).toBe('ended');
      expect((await getSeat(invited.sponsorship_id)).status).toBe('cancelled');
      expect(await membershipOf(api.db, member.user_id)).toMatchObject({
        tier: 'free',
        source: 'self',
        sponsorship_id: null,
      });
      expect((await seatEvents(api.db, active.sponsorship_id)).at(-1)).toEqual({
        from_status: 'active',
        to_status: 'ended',
        actor: 'system',
        reason: 'expired',
      });
      expect((await seatEvents(api.db, invited.sponsorship_id)).at(-1)).toEqual({
        from_status: 'invited',
        to_status: 'cancelled',
        actor: 'system',
        reason: 'expired',
      });
      // Nothing is due any more.
      expect(await api.expireDueSeats()).toBe(0);
    });

    it('leaves seats whose term has not ended, and closed seats, alone', async () => {
      const live = await provision(freshEmail('not-yet'));
      const closed = await provision(freshEmail('closed'));
      await api.call('DELETE', `${SEATS}/${closed.sponsorship_id}`, partner);
      await makeDue([closed.sponsorship_id]);
      const before = await seatEvents(api.db, closed.sponsorship_id);
      await api.expireDueSeats();
      expect((await getSeat(live.sponsorship_id)).status).toBe('invited');
      expect((await getSeat(closed.sponsorship_id)).status).toBe('cancelled');
      expect(await seatEvents(api.db, closed.sponsorship_id)).toEqual(before);
    });

    it('closes each due seat exactly once when two replicas run the job at the same time', async () => {
      const other = await startSponsorshipApi(auth);
      try {
        const bulk = await createPartner(api.auth, { sponsorship: true });
        const tag = fresh('e');
        await insertInvitedSeats(api.db, bulk.client_id, tag, 250);
        const members = await Promise.all([1, 2, 3].map(() => registerMember(crew, freshEmail('replica'))));
        const actives = await Promise.all(members.map((m) => provision(m.email, bulk)));
        const ids = [
          ...Array.from({ length: 250 }, (_, i) => seatIdOf(tag, i + 1)),
          ...actives.map((s) => s.sponsorship_id),
        ];
        await makeDue(ids);

        const [one, two] = await Promise.all([api.expireDueSeats(), other.expireDueSeats()]);
        expect(one + two).toBe(253);
        const { rows } = await api.db.query<{ sponsorship_id: string; n: string }>(
          `SELECT sponsorship_id, count(*) AS n FROM sponsorship.seat_events
            WHERE sponsorship_id = ANY($1::text[]) AND reason = 'expired' GROUP BY sponsorship_id`,
          [ids],
        );
        expect(rows).toHaveLength(253);
        expect(rows.every((r) => r.n === '1')).toBe(true);
        const { rows: statuses } = await api.db.query<{ status: string; n: string }>(
          `SELECT status, count(*) AS n FROM sponsorship.seats WHERE client_id = $1 GROUP BY status ORDER BY status`,
          [bulk.client_id],
        );
        expect(statuses).toEqual([
          { status: 'cancelled', n: '250' },
          { status: 'ended', n: '3' },
        ]);
        for (const m of members) expect((await membershipOf(api.db, m.user_id)).tier).toBe('free');
      } finally {
        await other.close();
      }
    }, 30_000);
  });
});

import { startCrewApi, type CrewApiHarness } from '../support/starters/crew-api';
import { expectProblem } from '../support/http';
import { startAuthServer, type AuthServerHarness } from '../support/starters/auth-server';
import {
  fresh,
  freshEmail,
  membershipOf,
  registerMember,
  seatCount,
  seatEvents,
  seatOf,
  statusOf,
  type Member,
  type MembershipRow,
  type SeatBody,
} from '../support/sponsorship';
import { createPartner } from '../support/app-factories';
import {
  startSponsorshipApi,
  type Credentials,
  type SponsorshipApiHarness,
} from '../support/starters/sponsorship-api';

const SEATS = '/v1/partners/sponsorships';
const LEFT = '/v1/partners/members/left';

/**
 * When premium cannot be written on crew-api, nothing changes on either side: a provision answers
 * 502 entitlement_write_failed and leaves no seat, member-left answers 503 and the seat stays open.
 * Two ways to fail: crew-api answers with an error (its database refuses this member's membership
 * write), and crew-api is gone (nobody answers its RPC queue; the calls time out).
 */
describe('sponsorship-api when crew-api cannot write premium', () => {
  let auth: AuthServerHarness;
  let crew: CrewApiHarness | undefined;
  let api: SponsorshipApiHarness;
  let partner: Credentials;

  beforeAll(async () => {
    auth = await startAuthServer();
    crew = await startCrewApi(auth, {}, { rpc: true });
    api = await startSponsorshipApi(auth, { RPC_TIMEOUT_MS: '1500' });
    partner = await createPartner(auth, { sponsorship: true, memberLeft: true });
  }, 60_000);

  afterAll(async () => {
    await api?.close();
    await crew?.close();
    await auth?.close();
  });

  function theCrew(): CrewApiHarness {
    if (!crew) throw new Error('crew-api is not running');
    return crew;
  }

  async function sponsored(): Promise<{ member: Member; seat: SeatBody }> {
    const member = await registerMember(theCrew(), freshEmail('ent'));
    const res = await api.call('POST', SEATS, partner, { email: member.email });
    expect(statusOf(res)).toMatchObject({ status: 201 });
    expect(seatOf(res).status).toBe('active');
    return { member, seat: seatOf(res) };
  }

  /** Everything a failed call must leave as it was. */
  async function snapshot(member: Member, seatId?: string) {
    const membership: MembershipRow = await membershipOf(api.db, member.user_id);
    return {
      membership,
      seats: await seatCount(api.db, 'email = $1', [member.email]),
      events: seatId ? await seatEvents(api.db, seatId) : [],
      seat: seatId
        ? (await api.db.query('SELECT * FROM sponsorship.seats WHERE sponsorship_id = $1', [seatId])).rows
        : [],
    };
  }

  describe('crew-api answers with an error', () => {
    /** A trigger that makes crew's database refuse any membership write of one member. */
    async function refuseMembershipWrites<T>(userId: string, work: () => Promise<T>): Promise<T> {
      const fn = `crew.it_refuse_${fresh('')}`;
      await api.db.query(
        `CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN
           IF NEW.user_id = '${userId}' THEN RAISE EXCEPTION 'membership writes refused by the test'; END IF;
           RETURN NEW;
         END $$`,
      );
      const trigger = `it_refuse_${fresh('')}`;
      await api.db.query(
        `CREATE TRIGGER ${trigger} BEFORE INSERT OR UPDATE ON crew.memberships FOR EACH ROW EXECUTE FUNCTION ${fn}()`,
      );
      try {
        return await work();
      } finally {
        await api.db.query(`DROP TRIGGER ${trigger} ON crew.memberships`);
        await api.db.query(`DROP FUNCTION ${fn}()`);
      }
    }

    it('provision: 502 entitlement_write_failed, no seat, no history, membership unchanged; a retry then works', async () => {
      const member = await registerMember(theCrew(), freshEmail('grant-refused'));
      const before = await snapshot(member);
      const seatsBefore = await seatCount(api.db, 'client_id = $1', [partner.client_id]);
      const res = await refuseMembershipWrites(member.user_id, () =>
        api.call('POST', SEATS, partner, { email: member.email }),
      );
      expectProblem(res, 502, 'entitlement_write_failed');
      expect(await snapshot(member)).toEqual(before);
      expect(before.seats).toBe(0);
      expect(await seatCount(api.db, 'client_id = $1', [partner.client_id])).toBe(seatsBefore);

      const retry = await api.call('POST', SEATS, partner, { email: member.email });
      expect(statusOf(retry)).toMatchObject({ status: 201 });
      expect(seatOf(retry).status).toBe('active');
      expect((await membershipOf(api.db, member.user_id)).sponsorship_id).toBe(seatOf(retry).sponsorship_id);
    });

    it('member-left: 503 service_unavailable, the seat still active, nothing recorded; a retry then closes it', async () => {
      const { member, seat } = await sponsored();
      const before = await snapshot(member, seat.sponsorship_id);
      const res = await refuseMembershipWrites(member.user_id, () =>
        api.call('POST', LEFT, partner, { user_id: member.user_id, reason: 'account_deleted' }),
      );
      expectProblem(res, 503, 'service_unavailable');
      expect(await snapshot(member, seat.sponsorship_id)).toEqual(before);

      const retry = await api.call('POST', LEFT, partner, { user_id: member.user_id });
      expect(retry.json()).toEqual({ user_id: member.user_id, ended: true, downgraded: true });
    });
  });

  describe('crew-api is gone (RPC calls time out)', () => {
    let member: Member;
    let seat: SeatBody;
    let newcomer: Member;

    beforeAll(async () => {
      ({ member, seat } = await sponsored());
      newcomer = await registerMember(theCrew(), freshEmail('no-crew'));
      await theCrew().close();
      crew = undefined;
    }, 30_000);

    it("provision of a crew member's e-mail: 502, no seat, no history, membership unchanged", async () => {
      const before = await snapshot(newcomer);
      const seatsBefore = await seatCount(api.db, 'client_id = $1', [partner.client_id]);
      expectProblem(
        await api.call('POST', SEATS, partner, { email: newcomer.email }),
        502,
        'entitlement_write_failed',
      );
      expect(await snapshot(newcomer)).toEqual(before);
      expect(await seatCount(api.db, 'client_id = $1', [partner.client_id])).toBe(seatsBefore);
    }, 15_000);

    it('provision of any e-mail: 502 (whether it is a member cannot be told), no seat', async () => {
      const email = freshEmail('unknown');
      expectProblem(await api.call('POST', SEATS, partner, { email }), 502, 'entitlement_write_failed');
      expect(await seatCount(api.db, 'email = $1', [email])).toBe(0);
    }, 15_000);

    it('member-left: 503, the seat still active, membership unchanged, no history row', async () => {
      const before = await snapshot(member, seat.sponsorship_id);
      expectProblem(
        await api.call('POST', LEFT, partner, { user_id: member.user_id }),
        503,
        'service_unavailable',
      );
      expect(await snapshot(member, seat.sponsorship_id)).toEqual(before);
      expect(before.seat[0]).toMatchObject({ status: 'active' });
    }, 15_000);

    it('remove of an active seat: 503 and the seat stays active', async () => {
      const before = await snapshot(member, seat.sponsorship_id);
      expectProblem(
        await api.call('DELETE', `${SEATS}/${seat.sponsorship_id}`, partner),
        503,
        'service_unavailable',
      );
      expect(await snapshot(member, seat.sponsorship_id)).toEqual(before);
    }, 15_000);

    it('reconcile applying a cancel of an active seat: 503 and nothing cancelled', async () => {
      const before = await snapshot(member, seat.sponsorship_id);
      const res = await api.call('POST', `${SEATS}/reconcile`, partner, {
        active_refs: ['someone-else@it.test'],
        apply: true,
        override_threshold: true,
      });
      expectProblem(res, 503, 'service_unavailable');
      expect(await snapshot(member, seat.sponsorship_id)).toEqual(before);
    }, 15_000);

    it('the expiry job: the batch rolls back and the seat stays active until crew-api is back', async () => {
      await api.db.query(
        `UPDATE sponsorship.seats SET expires_at = now() - interval '1 minute' WHERE sponsorship_id = $1`,
        [seat.sponsorship_id],
      );
      await expect(api.expireDueSeats()).rejects.toThrow();
      expect(seatOf(await api.call('GET', `${SEATS}/${seat.sponsorship_id}`, partner)).status).toBe('active');
      expect((await membershipOf(api.db, member.user_id)).tier).toBe('premium');

      crew = await startCrewApi(auth, {}, { rpc: true });
      expect(await api.expireDueSeats()).toBeGreaterThanOrEqual(1);
      expect(seatOf(await api.call('GET', `${SEATS}/${seat.sponsorship_id}`, partner)).status).toBe('ended');
      expect(await membershipOf(api.db, member.user_id)).toMatchObject({ tier: 'free', source: 'self' });
    }, 30_000);
  });
});

import { scrape } from '../support/metrics';
import { expectProblem } from '../support/http';
import { freshEmail, seatCount, seatOf, statusOf, type Member, type SeatBody } from '../support/sponsorship';
import { createCrewMember, createPartner } from '../support/app-factories';
import {
  startSponsorshipApi,
  useSponsorshipStack,
  type Credentials,
  type SponsorshipApiHarness,
} from '../support/starters/sponsorship-api';

/**
 * The probe budget: a seat whose provision found a crew member and that closes within 24 h of
 * its provisioning is a probe (it told the partner the address is a member's). With
 * SPONSORSHIP_PROBE_BUDGET_PER_DAY probes in the last 24 h, every new provision of that partner is
 * refused (429 rate_limit_exceeded, Retry-After) until the oldest leaves the window. Addresses of
 * no member never count; seats the partner keeps never count.
 */
jest.setTimeout(90_000);

const SEATS = '/v1/partners/sponsorships';
const BUDGET = 3;
const DAY_S = 86_400;

describe('sponsorship probe budget', () => {
  const { auth, crew, api } = useSponsorshipStack({ SPONSORSHIP_PROBE_BUDGET_PER_DAY: String(BUDGET) });

  const member = (name = 'Probe Target') => createCrewMember(auth, crew, { name: name });

  async function provision(partner: Credentials, email: string, extra: object = {}): Promise<SeatBody> {
    const res = await api.call('POST', SEATS, partner, { email, ...extra });
    expect(statusOf(res)).toMatchObject({ status: 201 });
    return seatOf(res);
  }

  async function remove(partner: Credentials, seat: SeatBody): Promise<void> {
    const res = await api.call('DELETE', `${SEATS}/${seat.sponsorship_id}`, partner);
    expect(statusOf(res)).toMatchObject({ status: 200 });
  }

  async function charges(partner: Credentials): Promise<number> {
    const { rows } = await api.db.query<{ n: string }>(
      `SELECT count(*) AS n FROM sponsorship.probe_charges WHERE client_id = $1`,
      [partner.client_id],
    );
    return Number(rows[0].n);
  }

  /** Provisions a member's address and removes the seat at once: one probe. */
  async function probe(partner: Credentials, m?: Member): Promise<void> {
    const seat = await provision(partner, (m ?? (await member())).email);
    expect(seat.status).toBe('active');
    await remove(partner, seat);
  }

  async function refusals(harness: SponsorshipApiHarness = api): Promise<number> {
    const text = await scrape(harness.app);
    const line = text.split('\n').find((l) => l.startsWith('sponsorship_probe_budget_refusals_total'));
    return line ? Number(line.split(' ').pop()) : 0;
  }

  it('refuses every new provision once the budget is spent, member or not: 429 with Retry-After, nothing created', async () => {
    const partner = await createPartner(api.auth, { sponsorship: true });
    const live = await provision(partner, freshEmail('live'));
    for (let i = 0; i < BUDGET - 1; i += 1) await probe(partner);
    // One short of the budget: still open, for members and everyone else.
    const kept = await provision(partner, (await member()).email);
    await remove(partner, kept);
    expect(await charges(partner)).toBe(BUDGET);
    const before = await refusals();

    const unknown = freshEmail('after-budget');
    const target = await member();
    for (const email of [unknown, target.email]) {
      const res = await api.call('POST', SEATS, partner, { email });
      expectProblem(res, 429, 'rate_limit_exceeded');
      const wait = Number(res.headers['retry-after']);
      expect(Number.isInteger(wait)).toBe(true);
      expect(wait).toBeGreaterThan(DAY_S - 120);
      expect(wait).toBeLessThanOrEqual(DAY_S);
      expect(res.text).not.toContain(email);
    }
    expect(
      await seatCount(api.db, 'client_id = $1 AND email = ANY($2)', [
        partner.client_id,
        [unknown, target.email],
      ]),
    ).toBe(0);
    expect(await refusals()).toBe(before + 2);

    // Reads, removals and the idempotent replay of a live seat are not provisions: never refused.
    const list = await api.call('GET', SEATS, partner);
    expect(statusOf(list)).toMatchObject({ status: 200 });
    const replay = await api.call('POST', SEATS, partner, { email: live.email });
    expect(statusOf(replay)).toMatchObject({ status: 200 });
    await remove(partner, live);
  });

  it('never counts addresses that belong to no crew member, however many are provisioned and removed', async () => {
    const partner = await createPartner(api.auth, { sponsorship: true });
    for (let i = 0; i < BUDGET * 3; i += 1) {
      await remove(partner, await provision(partner, freshEmail('nobody')));
    }
    expect(await charges(partner)).toBe(0);
    const seat = await provision(partner, (await member()).email);
    expect(seat.status).toBe('active');
  });

  it('counts only members’ seats closed within 24 h of provisioning; kept seats and later closes never count', async () => {
    const partner = await createPartner(api.auth, { sponsorship: true });
    // Kept: never a probe.
    await provision(partner, (await member()).email);
    // Closed 25 h after provisioning: the partner held the seat for more than a day.
    const old = await provision(partner, (await member()).email);
    await api.db.query(
      `UPDATE sponsorship.seats SET invited_at = invited_at - interval '25 hours' WHERE sponsorship_id = $1`,
      [old.sponsorship_id],
    );
    await remove(partner, old);
    expect(await charges(partner)).toBe(0);

    // Removing an already-cancelled seat again changes nothing and charges nothing.
    await remove(partner, old);
    expect(await charges(partner)).toBe(0);
  });

  it('counts a member’s seat cancelled by reconcile, ended by member-left, or ended by a term under a day', async () => {
    const partner = await createPartner(api.auth, { sponsorship: true, memberLeft: true });
    const keep = await provision(partner, (await member()).email);

    const byReconcile = await provision(partner, (await member()).email);
    const reconciled = await api.call('POST', `${SEATS}/reconcile`, partner, {
      active_refs: [keep.email],
      apply: true,
      override_threshold: true,
    });
    expect(reconciled.json()).toMatchObject({ applied: true, cancelled_count: 1 });
    expect(await charges(partner)).toBe(1);

    const leaver = await member();
    await provision(partner, leaver.email);
    const left = await api.call('POST', '/v1/partners/members/left', partner, { user_id: leaver.user_id });
    expect(left.json()).toMatchObject({ ended: true });
    expect(await charges(partner)).toBe(2);

    const short = await provision(partner, (await member()).email, {
      expires_at: new Date(Date.now() + 1500).toISOString(),
    });
    await new Promise((r) => setTimeout(r, 2000));
    await api.expireDueSeats();
    const after = await api.call('GET', `${SEATS}/${short.sponsorship_id}`, partner);
    expect(seatOf(after).status).toBe('ended');
    expect(await charges(partner)).toBe(3);
    expect(byReconcile.status).toBe('active');

    expectProblem(
      await api.call('POST', SEATS, partner, { email: freshEmail('x') }),
      429,
      'rate_limit_exceeded',
    );
  });

  it('opens again when the oldest probe leaves the 24 h window, and Retry-After says when', async () => {
    const partner = await createPartner(api.auth, { sponsorship: true });
    for (let i = 0; i < BUDGET; i += 1) await probe(partner);
    // The probes happened almost a day ago: the oldest leaves the window within seconds.
    await api.db.query(
      `UPDATE sponsorship.probe_charges
          SET charged_at = clock_timestamp() - interval '24 hours' + interval '8 seconds'
        WHERE client_id = $1`,
      [partner.client_id],
    );
    const refused = await api.call('POST', SEATS, partner, { email: freshEmail('soon') });
    expectProblem(refused, 429, 'rate_limit_exceeded');
    const wait = Number(refused.headers['retry-after']);
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(8);

    await api.db.query(
      `UPDATE sponsorship.probe_charges SET charged_at = charged_at - interval '1 minute' WHERE client_id = $1`,
      [partner.client_id],
    );
    await provision(partner, freshEmail('open-again'));
  });

  it('is one budget across replicas: a probe made through one is refused through the other, and a seat is charged once', async () => {
    const second = await startSponsorshipApi(auth, {
      SPONSORSHIP_PROBE_BUDGET_PER_DAY: String(BUDGET),
    });
    try {
      const partner = await createPartner(api.auth, { sponsorship: true });
      for (let i = 0; i < BUDGET - 1; i += 1) await probe(partner);
      const last = await provision(partner, (await member()).email);
      // Both replicas remove the same seat at once: it is closed, and charged, once.
      const answers = await Promise.all(
        [api, second].map((h) => h.call('DELETE', `${SEATS}/${last.sponsorship_id}`, partner)),
      );
      expect(answers.map((a) => a.status)).toEqual([200, 200]);
      expect(await charges(partner)).toBe(BUDGET);

      const before = await refusals(second);
      expectProblem(
        await second.call('POST', SEATS, partner, { email: freshEmail('r2') }),
        429,
        'rate_limit_exceeded',
      );
      expectProblem(
        await api.call('POST', SEATS, partner, { email: freshEmail('r1') }),
        429,
        'rate_limit_exceeded',
      );
      expect(await refusals(second)).toBe(before + 1);
    } finally {
      await second.close();
    }
  });
});

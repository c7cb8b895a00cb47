import { freshEmail, seatOf, statusOf, type Member, type SeatBody } from '../support/sponsorship';
import { AUTH_CONSENTS_REVOKE } from '@svc/contracts';
import { createCrewMember, createPartner, type TestPartner } from '../support/app-factories';
import { issueCode } from '../support/oauth/flow';
import { useSponsorshipStack, type Credentials } from '../support/starters/sponsorship-api';

/**
 * A seat names its crew member (`crew_name`) only to a partner the member has connected (OAuth
 * consent), and only while that consent lasts: before it, and again after a disconnect, every
 * answer that shows the seat has `crew_name: null`. Provisioning an address must not tell a
 * partner whose it is.
 */
jest.setTimeout(60_000);

const SEATS = '/v1/partners/sponsorships';

describe('sponsorship seats: crew_name only with the member’s consent', () => {
  const { auth, crew, api } = useSponsorshipStack();

  /** Every way the partner can see this seat: get, the list (filtered to its status) and the provision replay. */
  async function namesSeenBy(partner: Credentials, seat: SeatBody): Promise<(string | null)[]> {
    const got = await api.call('GET', `${SEATS}/${seat.sponsorship_id}`, partner);
    expect(statusOf(got)).toMatchObject({ status: 200 });
    const list = await api.call('GET', `${SEATS}?status=${seat.status}&limit=200`, partner);
    expect(statusOf(list)).toMatchObject({ status: 200 });
    const listed = list
      .json<{ items: SeatBody[] }>()
      .items.find((s) => s.sponsorship_id === seat.sponsorship_id);
    expect(listed).toBeDefined();
    const replay = await api.call('POST', SEATS, partner, { email: seat.email });
    expect(statusOf(replay)).toMatchObject({ status: 200 });
    return [
      seatOf(got).crew_name,
      listed === undefined ? 'missing' : listed.crew_name,
      seatOf(replay).crew_name,
    ];
  }

  /** The member connects the partner: they allow it on the consent screen (auth-server records the consent). */
  const connectPartner = (member: Member, partner: TestPartner) =>
    issueCode(auth.rpc, { member, partner, scope: 'profile:read' });

  /** The member disconnects the partner on their account page. */
  async function disconnectPartner(member: Member, partner: TestPartner): Promise<void> {
    const answer = await auth.rpc.call(AUTH_CONSENTS_REVOKE, {
      user_id: member.user_id,
      client_id: partner.client_id,
    });
    expect(answer).toEqual({ revoked: true });
  }

  async function provisionMember(partner: Credentials, member: Member): Promise<SeatBody> {
    const res = await api.call('POST', SEATS, partner, { email: member.email });
    expect(statusOf(res)).toMatchObject({ status: 201 });
    return seatOf(res);
  }

  it('answers a provision of a crew member’s address active but without the name, everywhere, until the member connects', async () => {
    const partner = await createPartner(api.auth, { sponsorship: true });
    const member = await createCrewMember(auth, crew, { name: 'Ines Duarte' });
    const seat = await provisionMember(partner, member);
    expect(seat).toMatchObject({ status: 'active', email: member.email, crew_name: null });
    expect(await namesSeenBy(partner, seat)).toEqual([null, null, null]);

    const dryRun = await api.call('POST', `${SEATS}/reconcile`, partner, {
      active_refs: [freshEmail('other')],
    });
    expect(statusOf(dryRun)).toMatchObject({ status: 200 });
    const diff = dryRun.json<{ to_cancel: Record<string, unknown>[] }>().to_cancel;
    expect(diff).toEqual([{ email: member.email, sponsorship_id: seat.sponsorship_id }]);
    expect(JSON.stringify(dryRun.json())).not.toContain('Ines Duarte');
  });

  it('names the member to the partner they connected, and to no other partner', async () => {
    const partner = await createPartner(api.auth, { sponsorship: true });
    const other = await createPartner(api.auth, { sponsorship: true });
    const member = await createCrewMember(auth, crew, { name: 'Tomas Lind' });
    const seat = await provisionMember(partner, member);
    const otherSeat = await provisionMember(other, member);

    await connectPartner(member, partner);

    expect(await namesSeenBy(partner, seat)).toEqual(['Tomas Lind', 'Tomas Lind', 'Tomas Lind']);
    expect(await namesSeenBy(other, otherSeat)).toEqual([null, null, null]);
  });

  it('names the member in the provision answer itself when they had connected the partner before', async () => {
    const partner = await createPartner(api.auth, { sponsorship: true });
    const member = await createCrewMember(auth, crew, { name: 'Aiko Sato' });
    await connectPartner(member, partner);
    const seat = await provisionMember(partner, member);
    expect(seat).toMatchObject({ status: 'active', crew_name: 'Aiko Sato' });
  });

  it('withholds the name again once the member disconnects the partner (DELETE answer included)', async () => {
    const partner = await createPartner(api.auth, { sponsorship: true });
    const member = await createCrewMember(auth, crew, { name: 'Lena Brandt' });
    const seat = await provisionMember(partner, member);
    await connectPartner(member, partner);
    expect(await namesSeenBy(partner, seat)).toEqual(['Lena Brandt', 'Lena Brandt', 'Lena Brandt']);

    await disconnectPartner(member, partner);

    expect(await namesSeenBy(partner, seat)).toEqual([null, null, null]);
    const removed = await api.call('DELETE', `${SEATS}/${seat.sponsorship_id}`, partner);
    expect(statusOf(removed)).toMatchObject({ status: 200 });
    expect(seatOf(removed)).toMatchObject({ status: 'cancelled', crew_name: null });
  });

  it('names the member again after they connect the partner anew', async () => {
    const partner = await createPartner(api.auth, { sponsorship: true });
    const member = await createCrewMember(auth, crew, { name: 'Omar Haddad' });
    const seat = await provisionMember(partner, member);
    await connectPartner(member, partner);
    await disconnectPartner(member, partner);
    await connectPartner(member, partner);
    const got = await api.call('GET', `${SEATS}/${seat.sponsorship_id}`, partner);
    expect(seatOf(got).crew_name).toBe('Omar Haddad');
  });

  it('names exactly the connected members on a page of seats', async () => {
    const partner = await createPartner(api.auth, { sponsorship: true });
    const members = await Promise.all(
      ['Ada One', 'Ben Two', 'Cy Three', 'Di Four'].map((name) =>
        createCrewMember(auth, crew, { name: name }),
      ),
    );
    for (const m of members) await provisionMember(partner, m);
    await connectPartner(members[1], partner);
    await connectPartner(members[3], partner);
    const list = await api.call('GET', `${SEATS}?limit=200`, partner);
    const names = Object.fromEntries(
      list.json<{ items: SeatBody[] }>().items.map((s) => [s.email, s.crew_name]),
    );
    expect(names).toEqual({
      [members[0].email]: null,
      [members[1].email]: 'Ben Two',
      [members[2].email]: null,
      [members[3].email]: 'Di Four',
    });
  });
});

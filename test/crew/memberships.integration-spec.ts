import { randomBytes } from 'node:crypto';
import {
  CREW_MEMBERS_BY_EMAIL,
  CREW_MEMBERSHIP_DROP,
  CREW_MEMBERSHIP_GRANT,
  MEMBER_REGISTERED,
  type ProblemBody,
} from '@svc/contracts';
import { RpcRemoteError } from '@svc/platform';
import { useCrewApi } from '../support/starters/crew-api';
import { outboxEvents } from '../support/app-factories';

const SAM = 'usr_sandbox_sam_lee';

/**
 * crew-api's side of sponsorship: new members (`POST /internal/v1/crew`) and the entitlement RPCs
 * sponsorship-api calls, against real PostgreSQL and RabbitMQ.
 */
describe('crew-api memberships and member registration', () => {
  const { auth, crew } = useCrewApi({}, { rpc: true });

  async function newMember(): Promise<{ user_id: string; email: string }> {
    const email = `Member-${randomBytes(4).toString('hex')}@Crew.Test`;
    const res = await crew.internal('POST', '/internal/v1/crew', {
      email: ` ${email} `,
      name: 'Kai Ostrander',
      role: 'Bosun',
      country: 'NO',
    });
    expect(res.status).toBe(201);
    return res.json<{ user_id: string; email: string }>();
  }

  async function membership(userId: string) {
    const { rows } = await crew.db.query<{
      tier: string;
      source: string;
      sponsor_client_id: string | null;
      sponsorship_id: string | null;
      expires_at: Date | null;
    }>(
      `SELECT tier, source, sponsor_client_id, sponsorship_id, expires_at FROM crew.memberships WHERE user_id = $1`,
      [userId],
    );
    return rows[0];
  }

  describe('POST /internal/v1/crew', () => {
    it('creates a free member with a normalised e-mail and commits crew.member.registered with it', async () => {
      const member = await newMember();
      expect(member.user_id).toMatch(/^usr_[A-Za-z0-9_-]+$/);
      expect(member.email).toBe(member.email.trim().toLowerCase());
      expect(await membership(member.user_id)).toMatchObject({ tier: 'free', source: 'self' });
      const events = await outboxEvents(crew.db, member.user_id);
      expect(events).toHaveLength(1);
      expect(events[0].routing_key).toBe(MEMBER_REGISTERED);
      expect(events[0].payload).toMatchObject({
        type: MEMBER_REGISTERED,
        email: member.email,
        name: 'Kai Ostrander',
      });
    });

    it('refuses a taken e-mail with 409 conflict, and writes nothing', async () => {
      const member = await newMember();
      const again = await crew.internal('POST', '/internal/v1/crew', {
        email: member.email.toUpperCase(),
        name: 'Someone Else',
        role: 'Cook',
        country: 'PT',
      });
      expect(again.status).toBe(409);
      expect(again.json<ProblemBody>().type).toMatch(/\/errors\/conflict$/);
      const { rows } = await crew.db.query(`SELECT 1 FROM crew.crew_members WHERE email = $1`, [
        member.email,
      ]);
      expect(rows).toHaveLength(1);
    });

    it('answers 422 naming each bad field', async () => {
      const res = await crew.internal('POST', '/internal/v1/crew', {
        email: 'not-an-email',
        role: '',
        extra: 1,
      });
      expect(res.status).toBe(422);
      const fields = res
        .json<ProblemBody>()
        .errors?.map((e) => e.field)
        .sort();
      expect(fields).toEqual(['country', 'email', 'extra', 'name', 'role']);
    });

    it('needs the internal token', async () => {
      const res = await crew.internal('POST', '/internal/v1/crew', { email: 'x@y.zz' }, 'wrong-token');
      expect(res.status).toBe(401);
    });
  });

  describe('entitlement RPCs', () => {
    it('finds members by normalised e-mail and ignores unknown ones', async () => {
      const member = await newMember();
      const answer = await auth.rpc.call(CREW_MEMBERS_BY_EMAIL, {
        emails: [member.email.toUpperCase(), 'nobody@nowhere.test'],
      });
      expect(answer.members).toEqual([
        { user_id: member.user_id, email: member.email, name: 'Kai Ostrander' },
      ]);
    });

    it('grants sponsored premium once per seat, announces it, and drops only what that seat gave', async () => {
      const member = await newMember();
      const expires = '2030-01-01T00:00:00.000Z';
      const grant = {
        user_id: member.user_id,
        sponsor_client_id: 'sandbox-partner',
        sponsorship_id: 'sps_it_1',
        expires_at: expires,
      };
      expect(await auth.rpc.call(CREW_MEMBERSHIP_GRANT, grant)).toEqual({
        granted: true,
        name: 'Kai Ostrander',
      });
      expect(await membership(member.user_id)).toMatchObject({
        tier: 'premium',
        source: 'sponsored',
        sponsor_client_id: 'sandbox-partner',
        sponsorship_id: 'sps_it_1',
        expires_at: new Date(expires),
      });
      const afterGrant = (await outboxEvents(crew.db, member.user_id)).map((e) => e.routing_key);
      expect(afterGrant).toEqual([MEMBER_REGISTERED, 'user.profile.updated']);

      // The same grant again changes nothing and announces nothing.
      expect(await auth.rpc.call(CREW_MEMBERSHIP_GRANT, grant)).toEqual({
        granted: true,
        name: 'Kai Ostrander',
      });
      expect(await outboxEvents(crew.db, member.user_id)).toHaveLength(2);

      // Another partner's seat cannot take it over, nor drop it.
      const other = { ...grant, sponsor_client_id: 'sandbox-partner-b', sponsorship_id: 'sps_it_2' };
      expect((await auth.rpc.call(CREW_MEMBERSHIP_GRANT, other)).granted).toBe(false);
      expect(
        await auth.rpc.call(CREW_MEMBERSHIP_DROP, {
          drops: [{ user_id: member.user_id, sponsorship_id: 'sps_it_2' }],
        }),
      ).toEqual({ downgraded: [] });
      expect((await membership(member.user_id)).sponsorship_id).toBe('sps_it_1');

      const drop = { drops: [{ user_id: member.user_id, sponsorship_id: 'sps_it_1' }] };
      expect(await auth.rpc.call(CREW_MEMBERSHIP_DROP, drop)).toEqual({ downgraded: ['sps_it_1'] });
      expect(await membership(member.user_id)).toMatchObject({
        tier: 'free',
        source: 'self',
        sponsor_client_id: null,
        sponsorship_id: null,
        expires_at: null,
      });
      // The same seat's drop again (sponsorship-api retrying after its own commit failed) reports
      // the drop it made, without a second write or event.
      expect(await auth.rpc.call(CREW_MEMBERSHIP_DROP, drop)).toEqual({ downgraded: ['sps_it_1'] });
      expect(await membership(member.user_id)).toMatchObject({ tier: 'free', source: 'self' });
      expect(await outboxEvents(crew.db, member.user_id)).toHaveLength(3);
    });

    it('never touches premium the member pays for', async () => {
      const before = await membership(SAM);
      expect(before).toMatchObject({ tier: 'premium', source: 'self' });
      const grant = {
        user_id: SAM,
        sponsor_client_id: 'sandbox-partner',
        sponsorship_id: 'sps_it_sam',
        expires_at: '2030-01-01T00:00:00Z',
      };
      expect((await auth.rpc.call(CREW_MEMBERSHIP_GRANT, grant)).granted).toBe(false);
      expect(
        await auth.rpc.call(CREW_MEMBERSHIP_DROP, {
          drops: [{ user_id: SAM, sponsorship_id: 'sps_it_sam' }],
        }),
      ).toEqual({ downgraded: [] });
      expect(await membership(SAM)).toEqual(before);
    });

    it('answers member_not_found for a grant to nobody, and skips nobody in a drop', async () => {
      const grant = {
        user_id: 'usr_nobody_here',
        sponsor_client_id: 'sandbox-partner',
        sponsorship_id: 'sps_x',
        expires_at: '2030-01-01T00:00:00Z',
      };
      const err = await auth.rpc.call(CREW_MEMBERSHIP_GRANT, grant).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RpcRemoteError);
      expect((err as RpcRemoteError).remote).toMatchObject({ error: 'member_not_found' });
      expect(
        await auth.rpc.call(CREW_MEMBERSHIP_DROP, {
          drops: [{ user_id: 'usr_nobody_here', sponsorship_id: 'sps_x' }],
        }),
      ).toEqual({ downgraded: [] });
    });
  });
});

import { AUTH_MEMBER_ACCESS, CREW_MEMBER_EXPORT, type MemberAccessResponse } from '@svc/contracts';
import { RpcRemoteError } from '@svc/platform';
import { partner } from '../support/factories';
import {
  addSeaTimeEntries,
  addVesselPeriods,
  createCrewMember,
  databaseToday,
} from '../support/app-factories';
import { accessToken } from '../support/oauth/flow';
import { startCrewApi, useCrewApi } from '../support/starters/crew-api';

/**
 * crew-api's side of the access history (docs/access-history.md): each successful read of the
 * four crew-data endpoints counted under the scope the endpoint requires, sent to auth-server in
 * batches; refusals not counted. And the member's export of their whole record.
 */
jest.setTimeout(60_000);

const { auth, crew } = useCrewApi({ ACCESS_READS_FLUSH_MS: '100' }, { rpc: true });
const A = partner('sandbox-partner');
const B = partner('sandbox-partner-b');

async function readsOf(userId: string, done: (a: MemberAccessResponse) => boolean) {
  const until = Date.now() + 10_000;
  for (;;) {
    const access = await auth.rpc.call(AUTH_MEMBER_ACCESS, { user_id: userId });
    if (done(access) || Date.now() > until) return access;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const total = (a: MemberAccessResponse, clientId: string, scope: string) =>
  a.reads.filter((r) => r.client_id === clientId && r.scope === scope).reduce((n, r) => n + r.count, 0);

describe('reads of /v1/me*', () => {
  it('counts 200s and 304s per partner under the endpoint scope, and no refusal', async () => {
    const member = await createCrewMember(auth, crew);
    const tokenA = await accessToken(auth, member, { partner: A });
    const tokenB = await accessToken(auth, member, { partner: B, scope: 'profile:read' });

    const me = await crew.get('/v1/me', tokenA);
    expect(me.status).toBe(200);
    expect((await crew.get('/v1/me', tokenA, { 'if-none-match': me.headers.etag as string })).status).toBe(
      304,
    );
    expect((await crew.get('/v1/me/sea-time', tokenA)).status).toBe(200);
    expect((await crew.get('/v1/me/sea-time/recent', tokenA)).status).toBe(200);
    expect((await crew.get('/v1/me/vessels', tokenA)).status).toBe(200);
    expect((await crew.get('/v1/me/vessels?limit=0', tokenA)).status).toBe(422);
    expect((await crew.get('/v1/me', tokenB)).status).toBe(200);
    expect((await crew.get('/v1/me/vessels', tokenB)).status).toBe(403);
    expect((await crew.get('/v1/me', 'not-a-token')).status).toBe(401);

    const access = await readsOf(
      member.user_id,
      (a) => total(a, A.client_id, 'vessels:read') === 1 && total(a, B.client_id, 'profile:read') === 1,
    );
    expect(total(access, A.client_id, 'profile:read')).toBe(2);
    expect(total(access, A.client_id, 'seatime:read')).toBe(2);
    expect(total(access, A.client_id, 'vessels:read')).toBe(1);
    expect(total(access, B.client_id, 'profile:read')).toBe(1);
    expect(total(access, B.client_id, 'vessels:read')).toBe(0);
    expect(access.reads.every((r) => r.day === new Date().toISOString().slice(0, 10))).toBe(true);
  });
});

describe('graceful shutdown', () => {
  it('sends what a replica counted when it stops, however long its flush interval', async () => {
    const member = await createCrewMember(auth, crew);
    const token = await accessToken(auth, member, { partner: A, scope: 'profile:read' });
    const slow = await startCrewApi(auth, { ACCESS_READS_FLUSH_MS: '60000' });
    try {
      for (let i = 0; i < 2; i++) expect((await slow.get('/v1/me', token)).status).toBe(200);
    } finally {
      await slow.close();
    }
    const access = await auth.rpc.call(AUTH_MEMBER_ACCESS, { user_id: member.user_id });
    expect(total(access, A.client_id, 'profile:read')).toBe(2);
  });
});

describe('crew.member.export', () => {
  it("gives the member's whole record: profile, every sea-time entry and every vessel period", async () => {
    const member = await createCrewMember(auth, crew);
    await addVesselPeriods(crew.db, member.user_id, 60);
    await addSeaTimeEntries(crew.db, member.user_id, 15, await databaseToday(crew.db));
    const record = await auth.rpc.call(CREW_MEMBER_EXPORT, { user_id: member.user_id });
    expect(record.profile).toMatchObject({ user_id: member.user_id, email: member.email });
    expect(record.sea_time).toHaveLength(15);
    expect(record.vessels).toHaveLength(60);
  });

  it('answers member_not_found for someone without a record', async () => {
    await expect(auth.rpc.call(CREW_MEMBER_EXPORT, { user_id: 'usr_nobody_here' })).rejects.toBeInstanceOf(
      RpcRemoteError,
    );
  });
});

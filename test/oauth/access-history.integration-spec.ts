import { randomUUID } from 'node:crypto';
import { AUTH_ACCESS_READS_RECORD, AUTH_MEMBER_ACCESS, type AccessReadCount } from '@svc/contracts';
import { RetentionJob, RpcRemoteError, Sql } from '@svc/platform';
import { AccessHistoryService } from '../../apps/auth-server/src/access-history/access-history.service';
import { member, partner } from '../support/factories';
import { issueTokens } from '../support/oauth/flow';
import { startAuthServer, useAuthServer } from '../support/starters/auth-server';

/**
 * The crew member's access history (docs/access-history.md) on a real auth-server and database:
 * counts added in batches, read back per member, userinfo's reads counted, a graceful shutdown
 * losing nothing, and days past 13 months pruned.
 */
jest.setTimeout(60_000);

const { auth, http } = useAuthServer({ ACCESS_READS_FLUSH_MS: '100' });
const A = partner('sandbox-partner');
const B = partner('sandbox-partner-b');
const sam = member('sam.lee@sandbox.test');

const today = () => new Date().toISOString().slice(0, 10);
const someone = () => `usr_hist_${randomUUID().slice(0, 8)}`;
const record = (counts: AccessReadCount[]) => auth.rpc.call(AUTH_ACCESS_READS_RECORD, { counts });
const access = (userId: string) => auth.rpc.call(AUTH_MEMBER_ACCESS, { user_id: userId });

function count(
  userId: string,
  clientId: string,
  n: number,
  at: string,
  day = at.slice(0, 10),
): AccessReadCount {
  return { user_id: userId, client_id: clientId, scope: 'profile:read', day, count: n, last_at: at };
}

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const until = Date.now() + 10_000;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > until) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('auth.access-reads.record and auth.member.access', () => {
  it('adds counts to the stored ones (sum, latest time), each member and partner apart', async () => {
    const alice = someone();
    const bob = someone();
    const day = today();
    await record([
      count(alice, A.client_id, 3, `${day}T01:00:00.000Z`),
      count(bob, A.client_id, 1, `${day}T01:00:00.000Z`),
    ]);
    // A second replica's batch for the same key, with an earlier last read.
    await record([
      count(alice, A.client_id, 4, `${day}T00:30:00.000Z`),
      count(alice, B.client_id, 2, `${day}T02:00:00.000Z`),
    ]);

    const mine = await access(alice);
    expect(mine.reads).toEqual([
      { client_id: A.client_id, scope: 'profile:read', day, count: 7, last_at: `${day}T01:00:00.000Z` },
      { client_id: B.client_id, scope: 'profile:read', day, count: 2, last_at: `${day}T02:00:00.000Z` },
    ]);
    expect(mine.partners).toEqual(
      expect.arrayContaining([
        { client_id: A.client_id, client_name: 'Sandbox Partner' },
        { client_id: B.client_id, client_name: 'Sandbox Partner B' },
      ]),
    );
    expect((await access(bob)).reads).toEqual([
      expect.objectContaining({ client_id: A.client_id, count: 1 }),
    ]);
  });

  it('refuses a malformed batch and stores nothing of it', async () => {
    const alice = someone();
    const bad = { ...count(alice, A.client_id, 1, new Date().toISOString()), scope: 'admin:all' };
    await expect(auth.rpc.call(AUTH_ACCESS_READS_RECORD, { counts: [bad as never] })).rejects.toBeInstanceOf(
      RpcRemoteError,
    );
    expect((await access(alice)).reads).toEqual([]);
  });

  it('lists every consent of the member with its grant and revocation times', async () => {
    await issueTokens(auth.rpc, http, { member: sam, partner: B, scope: 'profile:read' });
    const { consents } = await access(sam.user_id);
    const b = consents.find((c) => c.client_id === B.client_id);
    expect(b).toMatchObject({ client_name: 'Sandbox Partner B', scopes: ['profile:read'] });
    expect(Date.parse(b!.granted_at)).not.toBeNaN();
  });
});

describe('/oauth/userinfo reads', () => {
  it('counts a read of the profile under profile:read within the flush interval', async () => {
    const { tokens } = await issueTokens(auth.rpc, http, { member: sam, partner: A, scope: 'profile:read' });
    const before = sumOf(await access(sam.user_id), A.client_id);
    for (let i = 0; i < 3; i++) expect((await http.userinfo(tokens.access_token)).status).toBe(200);
    const after = await eventually(
      () => access(sam.user_id),
      (a) => sumOf(a, A.client_id) >= before + 3,
    );
    expect(sumOf(after, A.client_id)).toBeGreaterThanOrEqual(before + 3);
    // Today's profile:read row (the member may have rows of other scopes and days from other files).
    const latest = after.reads.find(
      (r) => r.client_id === A.client_id && r.scope === 'profile:read' && r.day === today(),
    );
    expect(latest).toBeDefined();
    expect(Date.now() - Date.parse(latest!.last_at)).toBeLessThan(30_000);
  });

  it('writes what a replica counted when it shuts down gracefully, however long its flush interval', async () => {
    const slow = await startAuthServer({ ACCESS_READS_FLUSH_MS: '60000' });
    const userId = member('alex.morgan@sandbox.test').user_id;
    let before = 0;
    try {
      const { tokens } = await issueTokens(slow.rpc, http, {
        member: member('alex.morgan@sandbox.test'),
        partner: B,
        scope: 'profile:read',
      });
      before = sumOf(await access(userId), B.client_id);
      const res = await fetch(`${slow.url}/oauth/userinfo`, {
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      expect(res.status).toBe(200);
    } finally {
      await slow.close();
    }
    expect(sumOf(await access(userId), B.client_id)).toBeGreaterThanOrEqual(before + 1);
  });
});

describe('retention', () => {
  it('prunes days older than 13 months and keeps the rest', async () => {
    const alice = someone();
    const old = new Date();
    old.setUTCMonth(old.getUTCMonth() - 14);
    const recent = new Date();
    recent.setUTCMonth(recent.getUTCMonth() - 12);
    // Days long past: written through auth-server's own service (crew-api may send only today's
    // and yesterday's counts).
    await auth.app
      .get(AccessHistoryService)
      .record([
        count(alice, A.client_id, 5, old.toISOString()),
        count(alice, A.client_id, 6, recent.toISOString()),
      ]);
    const sql = auth.app.get(Sql);
    const rows = () =>
      sql.rows<{ day: string }>(
        `SELECT to_char(day, 'YYYY-MM-DD') AS day FROM access_reads WHERE user_id = $1`,
        [alice],
      );
    expect(await rows()).toHaveLength(2);
    await auth.app.get(RetentionJob).pruneOnce();
    expect(await rows()).toEqual([{ day: recent.toISOString().slice(0, 10) }]);
    expect((await access(alice)).reads.map((r) => r.count)).toEqual([6]);
  });
});

function sumOf(a: { reads: readonly { client_id: string; count: number }[] }, clientId: string): number {
  return a.reads.filter((r) => r.client_id === clientId).reduce((n, r) => n + r.count, 0);
}

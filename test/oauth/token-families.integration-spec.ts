import { randomBytes } from 'node:crypto';
import { AUTH_CONSENTS_REVOKE, type SandboxMember, type SandboxPartner } from '@svc/contracts';
import { RetentionJob, sha256Hex } from '@svc/platform';
import { IntrospectionCache } from '@svc/security';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import {
  REVOKE_LIVE_OF_MEMBER,
  REVOKE_LIVE_OF_PARTNER,
} from '../../apps/auth-server/src/tokens/token-pairs.repository';
import { REFRESH_RACE_WINDOW_MS, TokensService } from '../../apps/auth-server/src/tokens/tokens.service';
import type { TokenResponse } from '../support/factories';
import { issueTokens, expectOAuthError, expectTokenResponse } from '../support/oauth/flow';
import { createPartner } from '../support/app-factories';
import { useAuthServer } from '../support/starters/auth-server';

/**
 * Token families (the baseline migration, docs/architecture.md "Token endpoint"): a
 * refresh ends its pair with a HOT update (no index of token_pairs names what a rotation writes),
 * and a disconnect or a suspension finds each family's live pair, its newest, with one probe, so
 * it never reads a family's rotations. Against real PostgreSQL, on partners and members of this
 * file's own.
 */
jest.setTimeout(60_000);

const GRACE_SECONDS = 4;
const { auth, http } = useAuthServer({ REFRESH_TOKEN_REUSE_GRACE_SECONDS: String(GRACE_SECONDS) });
const db = () => auth.app.get(DataSource);
const uid = () => randomBytes(6).toString('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const DAY_S = 86_400;

/** A member of this file's own (a row in auth.users), so a disconnect touches no other test. */
async function newMember(): Promise<SandboxMember> {
  const m = { user_id: `fam-user-${uid()}`, email: `fam-${uid()}@families.example`, name: 'Family member' };
  await db().query(`INSERT INTO auth.users (user_id, email, password_hash, name) VALUES ($1, $2, 'x', $3)`, [
    m.user_id,
    m.email,
    m.name,
  ]);
  return m;
}

async function generationsOf(
  code: string,
): Promise<{ id: string; generation: number; revoked: string | null }[]> {
  return db().query(
    `SELECT id, generation, revoked_reason AS revoked FROM auth.token_pairs
      WHERE code_digest = $1 ORDER BY generation`,
    [code],
  );
}

async function familyOf(accessToken: string): Promise<string> {
  const [row] = (await db().query(`SELECT code_digest FROM auth.token_pairs WHERE access_digest = $1`, [
    sha256Hex(accessToken),
  ])) as { code_digest: string }[];
  return row.code_digest;
}

async function expectDead(p: SandboxPartner, tokens: TokenResponse) {
  expect((await http.userinfo(tokens.access_token)).status).toBe(401);
  expectOAuthError(await http.refresh(p, tokens.refresh_token), 400, 'invalid_grant');
}

/**
 * `work` on a connection of its own with auth-server's search_path (its statements name their
 * tables unqualified), inside a transaction that is rolled back after it when `rolledBack`.
 */
async function asAuthServer<T>(
  work: (session: Client) => Promise<T>,
  { rolledBack = false } = {},
): Promise<T> {
  const session = new Client({ connectionString: auth.services.databaseUrl, options: '-c search_path=auth' });
  await session.connect();
  try {
    if (rolledBack) await session.query('BEGIN');
    return await work(session);
  } finally {
    if (rolledBack) await session.query('ROLLBACK').catch(() => undefined);
    await session.end();
  }
}

describe('a rotation PostgreSQL writes as a HOT update', () => {
  it('no index of token_pairs names a column that a rotation or a revocation writes, and its pages keep room', async () => {
    const indexes = (await db().query(
      `SELECT pg_get_indexdef(indexrelid) AS def FROM pg_index WHERE indrelid = 'auth.token_pairs'::regclass`,
    )) as { def: string }[];
    expect(indexes.length).toBeGreaterThanOrEqual(5);
    for (const { def } of indexes) expect(def).not.toMatch(/revoked_at|revoked_reason|replaced_by/);
    const [{ reloptions }] = (await db().query(
      `SELECT reloptions FROM pg_class WHERE oid = 'auth.token_pairs'::regclass`,
    )) as { reloptions: string[] | null }[];
    expect(reloptions).toContain('fillfactor=50');
  });

  it('a refresh marks its pair rotated without a new index entry (a HOT update) and adds the next generation', async () => {
    const p = await createPartner(auth, { label: 'families-hot' });
    const { tokens } = await issueTokens(auth.rpc, http, { partner: p, member: await newMember() });
    const [{ secret_digest: secret }] = (await db().query(
      `SELECT secret_digest FROM auth.partners WHERE client_id = $1`,
      [p.client_id],
    )) as { secret_digest: string }[];
    await asAuthServer(
      async (session) => {
        const now = Date.now();
        const next = `tkp_${uid()}`;
        const {
          rows: [row],
        } = await session.query(
          `SELECT outcome FROM auth.token_refresh($1, $2, $3, NULL, NULL, 0, 1000, 10, $4, $5, $6, $7, $8)`,
          [
            sha256Hex(tokens.refresh_token),
            p.client_id,
            secret,
            next,
            uid(),
            uid(),
            new Date(now + 3_600_000),
            new Date(now + 90 * DAY_S * 1000),
          ],
        );
        expect(row.outcome).toBe('rotated');
        const {
          rows: [stats],
        } = await session.query(
          `SELECT n_tup_upd::int AS updated, n_tup_hot_upd::int AS hot FROM pg_stat_xact_user_tables
          WHERE relid = 'auth.token_pairs'::regclass`,
        );
        expect(stats).toEqual({ updated: 1, hot: 1 });
        const {
          rows: [added],
        } = await session.query(`SELECT generation FROM auth.token_pairs WHERE id = $1`, [next]);
        expect(added.generation).toBe(1);
      },
      { rolledBack: true },
    );
  });
});

describe('families: a member’s or a partner’s live pairs, one per family', () => {
  it('numbers a family: the exchange 0, each rotation and a grace re-issue one past the newest; a disconnect then ends the re-issued pair', async () => {
    const p = await createPartner(auth, { label: 'families-grace' });
    const m = await newMember();
    const { tokens: a } = await issueTokens(auth.rpc, http, { partner: p, member: m });
    const b = expectTokenResponse(await http.refresh(p, a.refresh_token));
    const c = expectTokenResponse(await http.refresh(p, b.refresh_token));
    await sleep(REFRESH_RACE_WINDOW_MS + 300);
    // B again within the grace: C is superseded and D issued, after C in the family.
    const d = expectTokenResponse(await http.refresh(p, b.refresh_token));
    const code = await familyOf(d.access_token);
    expect(await generationsOf(code)).toEqual([
      { id: expect.any(String), generation: 0, revoked: 'rotated' },
      { id: expect.any(String), generation: 1, revoked: 'rotated' },
      { id: expect.any(String), generation: 2, revoked: 'superseded' },
      { id: expect.any(String), generation: 3, revoked: null },
    ]);
    expect((await http.userinfo(d.access_token)).status).toBe(200);

    await auth.rpc.call(AUTH_CONSENTS_REVOKE, { user_id: m.user_id, client_id: p.client_id });

    await expectDead(p, d);
    expect((await generationsOf(code))[3].revoked).toBe('disconnected');
    expect((await http.userinfo(c.access_token)).status).toBe(401);
  });

  it('a suspension ends the live pair of each family, however often each was rotated', async () => {
    const p = await createPartner(auth, { label: 'families-suspension' });
    const alex = await newMember();
    const sam = await newMember();
    let often = (await issueTokens(auth.rpc, http, { partner: p, member: alex })).tokens;
    for (let i = 0; i < 5; i += 1) often = expectTokenResponse(await http.refresh(p, often.refresh_token));
    const never = (await issueTokens(auth.rpc, http, { partner: p, member: alex })).tokens;
    let twice = (await issueTokens(auth.rpc, http, { partner: p, member: sam })).tokens;
    for (let i = 0; i < 2; i += 1) twice = expectTokenResponse(await http.refresh(p, twice.refresh_token));

    await expect(auth.app.get(TokensService).setPartnerSuspended(p.client_id, true)).resolves.toBe(3);

    for (const tokens of [often, never, twice])
      expect((await http.userinfo(tokens.access_token)).status).toBe(401);
    const reasons = (await db().query(
      `SELECT revoked_reason AS reason, count(*)::int AS pairs FROM auth.token_pairs
        WHERE client_id = $1 GROUP BY revoked_reason ORDER BY revoked_reason`,
      [p.client_id],
    )) as { reason: string; pairs: number }[];
    expect(reasons).toEqual([
      { reason: 'partner_suspended', pairs: 3 },
      { reason: 'rotated', pairs: 7 },
    ]);
  });

  it('revocation and replay cost what is live, not the history: one tombstone for a family rotated 20 times, none for a family already revoked', async () => {
    const p = await createPartner(auth, { label: 'families-bounded' });
    const m = await newMember();
    const cache = auth.app.get(IntrospectionCache);
    const tombstoned: string[] = [];
    // Every tombstone write goes through tombstoneEach (a batch's, a transaction's).
    const tombstoneEach = cache.tombstoneEach.bind(cache);
    const spy = jest.spyOn(cache, 'tombstoneEach').mockImplementation(async (tokens) => {
      tombstoned.push(...tokens.map((t) => t.digest));
      return tombstoneEach(tokens);
    });
    try {
      const issued = await issueTokens(auth.rpc, http, { partner: p, member: m });
      let tokens = issued.tokens;
      const first = tokens;
      for (let i = 0; i < 20; i += 1)
        tokens = expectTokenResponse(await http.refresh(p, tokens.refresh_token));
      await sleep(REFRESH_RACE_WINDOW_MS + 300);

      // RFC 7009 with an old token of the family: the live pair only.
      tombstoned.length = 0;
      expect((await http.revokeToken(p, first.refresh_token)).status).toBe(200);
      expect(tombstoned).toEqual([sha256Hex(tokens.access_token)]);
      await expectDead(p, tokens);
      // Again, and the code replayed: nothing is live, nothing is written.
      tombstoned.length = 0;
      expect((await http.revokeToken(p, tokens.refresh_token)).status).toBe(200);
      expectOAuthError(
        await http.exchange(p, issued.code, issued.verifier, issued.redirectUri),
        400,
        'invalid_grant',
      );
      expect(tombstoned).toEqual([]);
      // A rotated token reused: only its own access token, tombstoned before the statement as for
      // every refresh, never the family's history.
      expectOAuthError(await http.refresh(p, first.refresh_token), 400, 'invalid_grant');
      expect(tombstoned).toEqual([sha256Hex(first.access_token)]);
    } finally {
      spy.mockRestore();
    }
  });

  describe.each([
    ['a partner’s', REVOKE_LIVE_OF_PARTNER, false],
    ['a member’s', REVOKE_LIVE_OF_MEMBER, true],
  ])('%s revocation', (_name, statement, byMember) => {
    it('reads one pair per family, never the family’s rotations', async () => {
      const client = `fam-plan-${uid()}`;
      const user = `fam-plan-user-${uid()}`;
      const prefix = uid();
      // A member with 30 grants, each rotated 40 times: 1,230 pairs, 30 of them live.
      const families = 30;
      const rotations = 40;
      await asAuthServer(
        async (session) => {
          await session.query(
            `INSERT INTO auth.token_families (code_digest, client_id, user_id)
           SELECT $1 || '-' || f, $2, $3 FROM generate_series(1, $4) f`,
            [prefix, client, user, families],
          );
          // In each family generations 0..39 rotated and 40 live: the live one is the family's newest.
          await session.query(
            `INSERT INTO auth.token_pairs (id, code_digest, user_id, client_id, scopes, access_digest,
                                         refresh_digest, access_expires_at, refresh_expires_at, generation,
                                         revoked_at, revoked_reason)
           SELECT 'tkp_' || c || '_' || g, c, $2, $3, ARRAY['profile:read'], c || '-a' || g, c || '-r' || g,
                  now() + interval '1 hour', now() + interval '90 days', g,
                  CASE WHEN g < $4 THEN now() END, CASE WHEN g < $4 THEN 'rotated' END
             FROM generate_series(1, $5) f, LATERAL (SELECT $1 || '-' || f AS c) code, generate_series(0, $4) g`,
            [prefix, user, client, rotations, families],
          );
          const values = byMember ? ['disconnected', client, user] : ['partner_suspended', client];
          const {
            rows: [{ 'QUERY PLAN': plan }],
          } = await session.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement}`, values);
          const pairsRead = nodesOn(plan[0].Plan, 'token_pairs');
          expect(pairsRead.length).toBeGreaterThan(0);
          for (const node of pairsRead) {
            expect(node['Actual Rows']).toBeLessThanOrEqual(families);
            expect(node['Rows Removed by Filter'] ?? 0).toBe(0);
          }
          const { rows } = await session.query(
            `SELECT revoked_reason, generation, count(*)::int AS pairs FROM auth.token_pairs
            WHERE client_id = $1 AND revoked_reason <> 'rotated' GROUP BY 1, 2`,
            [client],
          );
          expect(rows).toEqual([{ revoked_reason: values[0], generation: rotations, pairs: families }]);
        },
        { rolledBack: true },
      );
    });
  });
});

interface PlanNode {
  'Relation Name'?: string;
  'Actual Rows': number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** The nodes of a plan that read `relation` (scans; the UPDATE's own node names it too). */
function nodesOn(node: PlanNode, relation: string): PlanNode[] {
  const own = node['Relation Name'] === relation && !('Operation' in node) ? [node] : [];
  return [...own, ...(node.Plans ?? []).flatMap((child) => nodesOn(child, relation))];
}

describe('retention', () => {
  it('ends a family with its newest pair, and keeps it while a newer pair lives', async () => {
    const client = `fam-prune-${uid()}`;
    const user = `fam-prune-user-${uid()}`;
    const [living, ended] = [uid(), uid()];
    for (const code of [living, ended]) {
      await db().query(
        `INSERT INTO auth.token_families (code_digest, client_id, user_id) VALUES ($1, $2, $3)`,
        [code, client, user],
      );
    }
    // Each family: generation 0 rotated and expired two days ago; generation 1 live (living) or
    // also expired (ended).
    await db().query(
      `INSERT INTO auth.token_pairs (id, code_digest, user_id, client_id, scopes, access_digest, refresh_digest,
                                     access_expires_at, refresh_expires_at, generation, revoked_at, revoked_reason)
       SELECT 'tkp_' || f.code || '_' || g, f.code, $3, $4, ARRAY['profile:read'], f.code || '-a' || g,
              f.code || '-r' || g, now() - interval '3 days',
              CASE WHEN g = 1 AND f.code = $1 THEN now() + interval '90 days' ELSE now() - interval '2 days' END,
              g, CASE WHEN g = 0 THEN now() - interval '3 days' END, CASE WHEN g = 0 THEN 'rotated' END
         FROM unnest(ARRAY[$1, $2]) AS f(code), generate_series(0, 1) g`,
      [living, ended, user, client],
    );

    await auth.app.get(RetentionJob).pruneOnce();

    const families = (await db().query(`SELECT code_digest FROM auth.token_families WHERE client_id = $1`, [
      client,
    ])) as { code_digest: string }[];
    expect(families.map((f) => f.code_digest)).toEqual([living]);
    expect((await generationsOf(living)).map((r) => r.generation)).toEqual([1]);
    expect(await generationsOf(ended)).toEqual([]);
  });
});

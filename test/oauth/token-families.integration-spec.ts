import { randomBytes } from 'node:crypto';
import { AUTH_CONSENTS_REVOKE, type SandboxMember, type SandboxPartner } from '@svc/contracts';
import { sha256Hex } from '@svc/platform';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import {
  familiesOfPairs,
  numberPairsInFamilies,
} from '../../apps/auth-server/src/migrations/1765300000000-tokenFamilies';
import { GrantsPruner } from '../../apps/auth-server/src/retention/grants-pruner';
import {
  REVOKE_LIVE_OF_MEMBER,
  REVOKE_LIVE_OF_PARTNER,
} from '../../apps/auth-server/src/tokens/token-pairs.repository';
import { REFRESH_RACE_WINDOW_MS, TokensService } from '../../apps/auth-server/src/tokens/tokens.service';
import type { TokenResponse } from '../support/factories';
import { issueTokens } from '../support/oauth/flow';
import { expectOAuthError, expectTokenResponse } from '../support/oauth/oauth-http';
import { onboardPartner } from '../support/oauth/onboard';
import { useAuthServer } from '../support/starters/auth-server';

/**
 * Token families (migration 1765300000000, docs/architecture.md "Token endpoint", step 17): a
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
    const p = await onboardPartner(auth, 'families-hot');
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
          `SELECT outcome FROM auth.token_refresh($1, $2, $3, NULL, $4, $5, $6, $7, $8, $9, NULL)`,
          [
            sha256Hex(tokens.refresh_token),
            p.client_id,
            secret,
            next,
            uid(),
            uid(),
            new Date(now + 3_600_000),
            new Date(now + 90 * DAY_S * 1000),
            new Date(now),
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
    const p = await onboardPartner(auth, 'families-grace');
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
    const p = await onboardPartner(auth, 'families-suspension');
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

  it('a pair inserted as the release before inserts it, without a generation, is numbered as its family’s newest and has its family', async () => {
    const client = `fam-legacy-${uid()}`;
    const user = `fam-legacy-user-${uid()}`;
    const code = uid();
    // What auth-server of the release before writes: no generation, no family row (docs/operations.md).
    const legacyInsert = (n: number, revoked: boolean) =>
      db().query(
        `INSERT INTO auth.token_pairs (id, code_digest, user_id, client_id, scopes, access_digest, refresh_digest,
                                       access_expires_at, refresh_expires_at, revoked_at, revoked_reason)
         VALUES ($1, $2, $3, $4, ARRAY['profile:read'], $5, $6, now() + interval '1 hour',
                 now() + interval '90 days', CASE WHEN $7 THEN now() END, CASE WHEN $7 THEN 'rotated' END)`,
        [`tkp_${code}_${n}`, code, user, client, `${code}-a${n}`, `${code}-r${n}`, revoked],
      );
    await legacyInsert(0, true);
    await legacyInsert(1, false);

    expect((await generationsOf(code)).map((r) => r.generation)).toEqual([0, 1]);
    expect(
      await db().query(`SELECT client_id, user_id FROM auth.token_families WHERE code_digest = $1`, [code]),
    ).toEqual([{ client_id: client, user_id: user }]);
    const ended = await asAuthServer(
      async (session) => (await session.query(REVOKE_LIVE_OF_MEMBER, ['disconnected', client, user])).rows,
    );
    expect(ended).toEqual([{ accessDigest: `${code}-a1` }]);
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

    await auth.app.get(GrantsPruner).pruneOnce();

    const families = (await db().query(`SELECT code_digest FROM auth.token_families WHERE client_id = $1`, [
      client,
    ])) as { code_digest: string }[];
    expect(families.map((f) => f.code_digest)).toEqual([living]);
    expect((await generationsOf(living)).map((r) => r.generation)).toEqual([1]);
    expect(await generationsOf(ended)).toEqual([]);
  });
});

describe('the migration to families', () => {
  it('numbers the pairs already stored by age within their family, a live pair last, and gives each family its row', async () => {
    const schema = `families_migration_${uid()}`;
    const q = (text: string, values: unknown[] = []) => db().query(text, values);
    await q(`CREATE SCHEMA "${schema}"`);
    try {
      await q(`CREATE TABLE "${schema}".token_pairs (LIKE auth.token_pairs INCLUDING DEFAULTS)`);
      await q(`CREATE TABLE "${schema}".token_families (LIKE auth.token_families INCLUDING ALL)`);
      // As the migration finds them once it added the column: generation 0 (its default then) everywhere.
      await q(`ALTER TABLE "${schema}".token_pairs ALTER COLUMN generation SET DEFAULT 0`);
      await q(
        `INSERT INTO "${schema}".token_pairs (id, code_digest, user_id, client_id, scopes, access_digest,
                                              refresh_digest, access_expires_at, refresh_expires_at,
                                              created_at, revoked_at, revoked_reason)
         VALUES ('p-live', 'chain', 'u1', 'c1', '{}', 'a1', 'r1', now(), now(), now() - interval '1 hour', NULL, NULL),
                ('p-first', 'chain', 'u1', 'c1', '{}', 'a2', 'r2', now(), now(), now() - interval '3 hours', now(), 'rotated'),
                ('p-second', 'chain', 'u1', 'c1', '{}', 'a3', 'r3', now(), now(), now() - interval '2 hours', now(), 'rotated'),
                ('p-alone', 'single', 'u2', 'c2', '{}', 'a4', 'r4', now(), now(), now(), NULL, NULL)`,
      );

      await q(numberPairsInFamilies(schema));
      await q(familiesOfPairs(schema));

      expect(
        await q(`SELECT id, generation FROM "${schema}".token_pairs ORDER BY code_digest, generation`),
      ).toEqual([
        { id: 'p-first', generation: 0 },
        { id: 'p-second', generation: 1 },
        { id: 'p-live', generation: 2 },
        { id: 'p-alone', generation: 0 },
      ]);
      expect(
        await q(
          `SELECT code_digest, client_id, user_id FROM "${schema}".token_families ORDER BY code_digest`,
        ),
      ).toEqual([
        { code_digest: 'chain', client_id: 'c1', user_id: 'u1' },
        { code_digest: 'single', client_id: 'c2', user_id: 'u2' },
      ]);
    } finally {
      await q(`DROP SCHEMA "${schema}" CASCADE`);
    }
  });
});

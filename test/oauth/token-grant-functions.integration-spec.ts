import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { TokensService } from '../../apps/auth-server/src/tokens/tokens.service';
import { startAuthServer, type AuthServerHarness } from '../support/starters/auth-server';

/**
 * The grants' SQL functions (token_refresh, token_exchange), which hold every rule of the two
 * grants, asked directly against real
 * PostgreSQL, one outcome at a time, on rows of this suite's own partner and member: each refusal
 * names its reason and changes nothing but what the rules say it changes (an exchange consumes
 * its code whatever the outcome, once the client is known). The HTTP suites check what the token
 * endpoint makes of each outcome; this one pins the outcomes themselves.
 */
jest.setTimeout(30_000);

let auth: AuthServerHarness;
let db: DataSource;

const uid = () => randomBytes(6).toString('hex');
const CLIENT = `fn-partner-${uid()}`;
const SECRET = 'secret-digest-of-fn-partner';
const SCOPES = ['profile:read', 'seatime:read'];
const HOUR = 3600_000;

beforeAll(async () => {
  auth = await startAuthServer();
  db = auth.app.get(DataSource);
  await db.query(
    `INSERT INTO auth.partners (client_id, secret_digest, name, redirect_uris, allowed_scopes)
     VALUES ($1, $2, 'Grant functions suite', $3, $4)`,
    [CLIENT, SECRET, ['https://fn.example/cb'], SCOPES],
  );
}, 60_000);

afterAll(async () => {
  await auth?.close();
});

async function member(consented = true): Promise<string> {
  const user = `fn-user-${uid()}`;
  await db.query(
    `INSERT INTO auth.users (user_id, email, password_hash, name) VALUES ($1, $2, 'x', 'Fn member')`,
    [user, `${user}@fn.example`],
  );
  if (consented)
    await db.query(`INSERT INTO auth.consents (user_id, client_id, scopes) VALUES ($1, $2, $3)`, [
      user,
      CLIENT,
      SCOPES,
    ]);
  return user;
}

interface Pair {
  id: string;
  refresh: string;
  access: string;
  code: string;
}

/** The first pair of a new family (as token_exchange would have issued it). */
async function pair(user: string, overrides: { refreshExpiresIn?: number } = {}): Promise<Pair> {
  const p = { id: `tkp_${uid()}`, refresh: uid(), access: uid(), code: uid() };
  await db.query(
    `WITH family AS (
       INSERT INTO auth.token_families (code_digest, client_id, user_id) VALUES ($2, $4, $3)
     )
     INSERT INTO auth.token_pairs (id, code_digest, generation, user_id, client_id, scopes, access_digest,
                                   refresh_digest, access_expires_at, refresh_expires_at)
     VALUES ($1, $2, 0, $3, $4, $5, $6, $7, now() + interval '1 hour', now() + make_interval(secs => $8))`,
    [
      p.id,
      p.code,
      user,
      CLIENT,
      SCOPES,
      p.access,
      p.refresh,
      (overrides.refreshExpiresIn ?? 86_400_000) / 1000,
    ],
  );
  return p;
}

interface RefreshRow {
  outcome: string;
  out_user_id: string | null;
  out_scopes: string[] | null;
  ended: string[] | null;
}

/** Runs a statement and resolves its rows: the suite's pool by default, or a session of a test's own. */
type Query = (text: string, values: unknown[]) => Promise<unknown[]>;

/**
 * token_refresh as auth-server calls it: by default in autocommit with the presented pair's access
 * digest tombstoned (`tombstoned`), or as inside a transaction (`tombstoned: null`).
 */
async function refresh(
  p: Pick<Pair, 'refresh' | 'access'>,
  opts: {
    client?: string;
    secret?: string;
    scopes?: string[] | null;
    tombstoned?: string | null;
    waitedMs?: number;
    raceWindowMs?: number;
    graceSeconds?: number;
  } = {},
  query: Query = (text, values) => db.query(text, values),
): Promise<{ row: RefreshRow; next: { id: string; refresh: string; access: string } }> {
  const next = { id: `tkp_${uid()}`, refresh: uid(), access: uid() };
  const now = Date.now();
  const [row] = (await query(
    `SELECT * FROM auth.token_refresh($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
    [
      p.refresh,
      opts.client ?? CLIENT,
      opts.secret ?? SECRET,
      opts.scopes ?? null,
      opts.tombstoned === undefined ? p.access : opts.tombstoned,
      opts.waitedMs ?? 0,
      opts.raceWindowMs ?? 1000,
      opts.graceSeconds ?? 10,
      next.id,
      next.access,
      next.refresh,
      new Date(now + HOUR),
      new Date(now + 90 * 24 * HOUR),
    ],
  )) as RefreshRow[];
  return { row, next };
}

async function pairRow(id: string) {
  const [row] = (await db.query(
    `SELECT revoked_at, revoked_reason, replaced_by, scopes FROM auth.token_pairs WHERE id = $1`,
    [id],
  )) as {
    revoked_at: Date | null;
    revoked_reason: string | null;
    replaced_by: string | null;
    scopes: string[];
  }[];
  return row;
}

describe('token_refresh', () => {
  it('rotates: the old pair is marked rotated and replaced by the new one, which keeps the scopes', async () => {
    const user = await member();
    const p = await pair(user);
    const { row, next } = await refresh(p);
    expect(row).toEqual({ outcome: 'rotated', out_user_id: user, out_scopes: SCOPES, ended: [p.access] });
    expect(await pairRow(p.id)).toMatchObject({ revoked_reason: 'rotated', replaced_by: next.id });
    expect((await pairRow(next.id)).revoked_at).toBeNull();
  });

  it('narrows the scope of the new pair, and refuses a widening or an empty scope with the granted scopes', async () => {
    const user = await member();
    const p = await pair(user);
    for (const scopes of [['profile:read', 'vessels:read'], []]) {
      const { row, next } = await refresh(p, { scopes });
      expect(row).toMatchObject({ outcome: 'scope', out_scopes: SCOPES, ended: null });
      expect(await pairRow(next.id)).toBeUndefined();
    }
    expect((await pairRow(p.id)).revoked_at).toBeNull();
    const { row, next } = await refresh(p, { scopes: ['seatime:read'] });
    expect(row.outcome).toBe('rotated');
    expect(row.out_scopes).toEqual(['seatime:read']);
    expect((await pairRow(next.id)).scopes).toEqual(['seatime:read']);
  });

  it('answers client for a wrong secret, another partner or a suspended one, before looking at the token', async () => {
    const user = await member();
    const p = await pair(user);
    expect((await refresh(p, { secret: 'not-the-digest' })).row.outcome).toBe('client');
    expect(
      (await refresh({ refresh: 'nobody', access: 'x' }, { secret: 'not-the-digest' })).row.outcome,
    ).toBe('client');
    await db.query(`UPDATE auth.partners SET suspended = true WHERE client_id = $1`, [CLIENT]);
    try {
      expect((await refresh(p)).row.outcome).toBe('client');
    } finally {
      await db.query(`UPDATE auth.partners SET suspended = false WHERE client_id = $1`, [CLIENT]);
    }
    expect((await pairRow(p.id)).revoked_at).toBeNull();
  });

  it('answers unusable for an unknown token, another client, or an expired one', async () => {
    const user = await member();
    expect((await refresh({ refresh: `unknown-${uid()}`, access: 'x' })).row.outcome).toBe('unusable');
    const other = `fn-other-${uid()}`;
    await db.query(
      `INSERT INTO auth.partners (client_id, secret_digest, name, redirect_uris, allowed_scopes)
       VALUES ($1, $2, 'Another', $3, $4)`,
      [other, SECRET, ['https://other.example/cb'], SCOPES],
    );
    const p = await pair(user);
    expect((await refresh(p, { client: other })).row.outcome).toBe('unusable');
    const expired = await pair(user, { refreshExpiresIn: -1000 });
    expect((await refresh(expired)).row.outcome).toBe('unusable');
    expect((await pairRow(p.id)).revoked_at).toBeNull();
    expect((await pairRow(expired.id)).revoked_at).toBeNull();
  });

  it('answers raced for a rotated token presented within the race window, and the successor is untouched', async () => {
    const user = await member();
    const p = await pair(user);
    const first = await refresh(p);
    expect(first.row.outcome).toBe('rotated');
    expect((await refresh(p)).row).toMatchObject({ outcome: 'raced', ended: null });
    expect((await refresh(p, { tombstoned: null })).row.outcome).toBe('raced');
    // Judged by when the request arrived: one that waited 10 s in auth-server arrived before the rotation.
    expect((await refresh(p, { raceWindowMs: 0, waitedMs: 10_000 })).row.outcome).toBe('raced');
    expect((await pairRow(first.next.id)).revoked_at).toBeNull();
  });

  it('re-issues for the previous token after the race window, within the grace: the successor is superseded', async () => {
    const user = await member();
    const p = await pair(user);
    const first = await refresh(p);
    // Autocommit may end only what the caller tombstoned: the successor's access token it did not.
    expect((await refresh(p, { raceWindowMs: 0 })).row.outcome).toBe('transaction');
    expect((await pairRow(first.next.id)).revoked_at).toBeNull();
    const { row, next } = await refresh(p, { raceWindowMs: 0, tombstoned: null });
    expect(row).toEqual({
      outcome: 'reissued',
      out_user_id: user,
      out_scopes: SCOPES,
      ended: [first.next.access],
    });
    expect(await pairRow(first.next.id)).toMatchObject({ revoked_reason: 'superseded' });
    expect(await pairRow(p.id)).toMatchObject({ revoked_reason: 'rotated', replaced_by: next.id });
    expect((await pairRow(next.id)).revoked_at).toBeNull();
    // The grace refuses a suspended partner as every grant does.
    await db.query(`UPDATE auth.partners SET suspended = true WHERE client_id = $1`, [CLIENT]);
    try {
      expect((await refresh(p, { raceWindowMs: 0, tombstoned: null })).row.outcome).toBe('client');
    } finally {
      await db.query(`UPDATE auth.partners SET suspended = false WHERE client_id = $1`, [CLIENT]);
    }
  });

  it('answers reused for a rotated token outside the grace: the live pair is revoked, and again costs nothing', async () => {
    const user = await member();
    const p = await pair(user);
    const first = await refresh(p);
    const second = await refresh({ refresh: first.next.refresh, access: first.next.access });
    const reuse = { raceWindowMs: 0, graceSeconds: 0 };
    expect((await refresh(p, reuse)).row.outcome).toBe('transaction');
    expect((await pairRow(second.next.id)).revoked_at).toBeNull();
    expect((await refresh(p, { ...reuse, tombstoned: null })).row).toMatchObject({
      outcome: 'reused',
      ended: [second.next.access],
    });
    expect(await pairRow(second.next.id)).toMatchObject({ revoked_reason: 'reuse_detected' });
    // The family is revoked already: answered in autocommit, nothing left to end.
    expect((await refresh(p, reuse)).row).toMatchObject({ outcome: 'reused', ended: [] });
  });

  it('answers transaction when the pair has another access token than the tombstoned one, and inside a transaction rotates', async () => {
    const user = await member();
    const p = await pair(user);
    expect((await refresh(p, { tombstoned: 'another-access-digest' })).row.outcome).toBe('transaction');
    expect((await pairRow(p.id)).revoked_at).toBeNull();
    const { row } = await refresh(p, { tombstoned: null });
    expect(row).toMatchObject({ outcome: 'rotated', ended: [p.access] });
  });

  it('answers disconnected when the consent is revoked, and changes nothing', async () => {
    const user = await member();
    const p = await pair(user);
    await db.query(`UPDATE auth.consents SET revoked_at = now() WHERE user_id = $1`, [user]);
    const { row, next } = await refresh(p);
    expect(row.outcome).toBe('disconnected');
    expect((await pairRow(p.id)).revoked_at).toBeNull();
    expect(await pairRow(next.id)).toBeUndefined();
  });

  it('of concurrent refreshes of one token exactly one rotates', async () => {
    const user = await member();
    const p = await pair(user);
    const rows = await Promise.all(Array.from({ length: 8 }, () => refresh(p)));
    const outcomes = rows.map((r) => r.row.outcome).sort();
    expect(outcomes.filter((o) => o === 'rotated')).toHaveLength(1);
    // Raced; or, on a machine so slow that a loser's statement started over the race window after
    // the rotation, `transaction` (the grace), which changed nothing either.
    for (const o of outcomes.filter((x) => x !== 'rotated')) expect(['raced', 'transaction']).toContain(o);
    const winner = rows.find((r) => r.row.outcome === 'rotated')!;
    expect((await pairRow(p.id)).replaced_by).toBe(winner.next.id);
    expect((await pairRow(winner.next.id)).revoked_at).toBeNull();
  });
});

const REDIRECT = 'https://fn.example/cb';
const CHALLENGE = 'challenge-of-the-verifier';

async function code(user: string, expiresIn = 60_000): Promise<string> {
  const digest = uid();
  await db.query(
    `INSERT INTO auth.authorization_codes (code_digest, client_id, user_id, redirect_uri, scopes, code_challenge, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7))`,
    [digest, CLIENT, user, REDIRECT, SCOPES, CHALLENGE, expiresIn / 1000],
  );
  return digest;
}

interface ExchangeItem {
  code: string;
  client?: string;
  secret?: string;
  redirect?: string;
  challenge?: string;
  /** Inside a transaction that tombstones what it ends. */
  mayRevoke?: boolean;
}

/** token_exchange's arguments for one exchange, with a new pair id and token digests of its own. */
function exchangeArgs(item: ExchangeItem) {
  const now = Date.now();
  return [
    item.code,
    item.client ?? CLIENT,
    item.secret ?? SECRET,
    item.redirect ?? REDIRECT,
    item.challenge ?? CHALLENGE,
    item.mayRevoke ?? false,
    `tkp_${uid()}`,
    uid(),
    uid(),
    new Date(now + HOUR),
    new Date(now + 90 * 24 * HOUR),
  ] as const;
}

type ExchangeArgs = ReturnType<typeof exchangeArgs>;

interface ExchangeRow {
  outcome: string;
  out_scopes: string[] | null;
  out_client_id: string | null;
  ended: string[] | null;
}

async function exchangeAlone(args: ExchangeArgs): Promise<ExchangeRow> {
  const [row] = (await db.query(
    `SELECT * FROM auth.token_exchange($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [...args],
  )) as ExchangeRow[];
  return row;
}

async function exchange(
  digest: string,
  opts: Omit<ExchangeItem, 'code'> = {},
): Promise<ExchangeRow & { pairId: string; accessDigest: string }> {
  const args = exchangeArgs({ code: digest, ...opts });
  return { ...(await exchangeAlone(args)), pairId: args[6], accessDigest: args[7] };
}

const consumed = async (digest: string) =>
  (
    (await db.query(`SELECT consumed_at FROM auth.authorization_codes WHERE code_digest = $1`, [digest])) as {
      consumed_at: Date | null;
    }[]
  )[0].consumed_at !== null;

describe('token_exchange', () => {
  it('issues the first pair of the family; a replay revokes the live pair, then costs nothing', async () => {
    const user = await member();
    const c = await code(user);
    const first = await exchange(c);
    expect(first).toMatchObject({ outcome: 'issued', out_scopes: SCOPES });
    const [row] = (await db.query(`SELECT code_digest, user_id FROM auth.token_pairs WHERE id = $1`, [
      first.pairId,
    ])) as { code_digest: string; user_id: string }[];
    expect(row).toEqual({ code_digest: c, user_id: user });
    // RFC 9700 §4.5: in autocommit it may not end a pair, so it asks for a transaction.
    expect((await exchange(c)).outcome).toBe('transaction');
    expect((await pairRow(first.pairId)).revoked_at).toBeNull();
    expect(await exchange(c, { mayRevoke: true })).toMatchObject({
      outcome: 'replayed',
      out_client_id: CLIENT,
      ended: [first.accessDigest],
    });
    expect(await pairRow(first.pairId)).toMatchObject({ revoked_reason: 'code_replayed' });
    expect(await exchange(c)).toMatchObject({ outcome: 'replayed', ended: [] });
  });

  it('answers client without consuming the code, and unknown for a code nobody issued', async () => {
    const user = await member();
    const c = await code(user);
    expect((await exchange(c, { secret: 'not-the-digest' })).outcome).toBe('client');
    expect(await consumed(c)).toBe(false);
    expect((await exchange(`unknown-${uid()}`)).outcome).toBe('unknown');
    expect((await exchange(c)).outcome).toBe('issued');
  });

  it.each([
    ['expired', { expiresIn: -1000 }],
    ['redirect_uri', { redirect: 'https://fn.example/other' }],
    ['pkce', { challenge: 'another-challenge' }],
  ] as const)('answers %s, consumes the code and issues nothing', async (outcome, opts) => {
    const user = await member();
    const c = await code(user, 'expiresIn' in opts ? opts.expiresIn : 60_000);
    const res = await exchange(c, opts as { redirect?: string; challenge?: string });
    expect(res.outcome).toBe(outcome);
    expect(await consumed(c)).toBe(true);
    expect(
      (await db.query(`SELECT 1 FROM auth.token_pairs WHERE id = $1`, [res.pairId])) as unknown[],
    ).toHaveLength(0);
  });

  it("answers other_client for another partner's code and consumes it", async () => {
    const user = await member();
    const c = await code(user);
    const other = `fn-exchanger-${uid()}`;
    await db.query(
      `INSERT INTO auth.partners (client_id, secret_digest, name, redirect_uris, allowed_scopes)
       VALUES ($1, $2, 'Exchanger', $3, $4)`,
      [other, SECRET, [REDIRECT], SCOPES],
    );
    expect((await exchange(c, { client: other })).outcome).toBe('other_client');
    expect(await consumed(c)).toBe(true);
  });

  it('answers disconnected when the member has no live consent, and consumes the code', async () => {
    const user = await member(false);
    const c = await code(user);
    const res = await exchange(c);
    expect(res.outcome).toBe('disconnected');
    expect(await consumed(c)).toBe(true);
    expect(
      (await db.query(`SELECT 1 FROM auth.token_pairs WHERE id = $1`, [res.pairId])) as unknown[],
    ).toHaveLength(0);
  });

  it('of concurrent exchanges of one code exactly one issues', async () => {
    const user = await member();
    const c = await code(user);
    const outcomes = (await Promise.all(Array.from({ length: 8 }, () => exchange(c)))).map((r) => r.outcome);
    expect(outcomes.filter((o) => o === 'issued')).toHaveLength(1);
    expect(outcomes.filter((o) => o !== 'issued').every((o) => o === 'transaction')).toBe(true);
  });
});

describe('a suspension beside a grant in flight', () => {
  it('waits for the grant to commit, then revokes the pair it committed', async () => {
    const user = await member();
    const p = await pair(user);
    const session = new Client({ connectionString: auth.services.databaseUrl });
    await session.connect();
    const tokens = auth.app.get(TokensService);
    try {
      await session.query('BEGIN');
      const { row, next } = await refresh(
        p,
        {},
        async (text, values) => (await session.query(text, values)).rows,
      );
      expect(row.outcome).toBe('rotated');
      let finished = false;
      const suspension = tokens.setPartnerSuspended(CLIENT, true).then((revoked) => {
        finished = true;
        return revoked;
      });
      await new Promise((r) => setTimeout(r, 300));
      // The grant holds the partner's lock shared: the suspension waits for it.
      expect(finished).toBe(false);
      await session.query('COMMIT');
      expect(await suspension).toBeGreaterThanOrEqual(1);
      expect(await pairRow(next.id)).toMatchObject({ revoked_reason: 'partner_suspended' });
      // And a grant after it sees the partner suspended.
      expect((await refresh({ refresh: next.refresh, access: next.access })).row.outcome).toBe('client');
    } finally {
      await session.end();
      await tokens.setPartnerSuspended(CLIENT, false);
    }
  });
});

/** token_refresh_batch as auth-server sends it when refreshes arrive while another is in flight. */
async function refreshBatch(ps: Pick<Pair, 'refresh' | 'access'>[]) {
  const nexts = ps.map(() => ({ id: `tkp_${uid()}`, access: uid(), refresh: uid() }));
  const now = Date.now();
  const rows = (await db.query(
    `SELECT * FROM auth.token_refresh_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ORDER BY ord`,
    [
      ps.map((p) => p.refresh),
      ps.map(() => CLIENT),
      ps.map(() => SECRET),
      ps.map((p) => p.access),
      ps.map(() => 0),
      1000,
      10,
      nexts.map((n) => n.id),
      nexts.map((n) => n.access),
      nexts.map((n) => n.refresh),
      ps.map(() => new Date(now + HOUR)),
      ps.map(() => new Date(now + 90 * 24 * HOUR)),
    ],
  )) as (RefreshRow & { ord: number })[];
  return { rows, nexts };
}

describe('token_refresh_batch', () => {
  it('answers each rotation what token_refresh would have answered alone after the ones before it', async () => {
    const user = await member();
    const [a, b] = [await pair(user), await pair(user)];
    const { rows, nexts } = await refreshBatch([a, b, a]);
    expect(rows.map((r) => [r.ord, r.outcome, r.ended])).toEqual([
      [1, 'rotated', [a.access]],
      [2, 'rotated', [b.access]],
      [3, 'raced', null],
    ]);
    expect(await pairRow(a.id)).toMatchObject({ revoked_reason: 'rotated', replaced_by: nexts[0].id });
    expect((await pairRow(nexts[0].id)).revoked_at).toBeNull();
    expect(await pairRow(nexts[2].id)).toBeUndefined();
  });

  it('gives way to a lock it waits for: it fails after 100 ms and changed nothing', async () => {
    const user = await member();
    const [a, b] = [await pair(user), await pair(user)];
    const session = new Client({ connectionString: auth.services.databaseUrl });
    await session.connect();
    try {
      await session.query('BEGIN');
      // b's family lock, as a revocation of it holds it.
      const [{ code }] = (await db.query(`SELECT code_digest AS code FROM auth.token_pairs WHERE id = $1`, [
        b.id,
      ])) as { code: string }[];
      await session.query(`SELECT pg_advisory_xact_lock(hashtextextended('token_family:' || $1, 0))`, [code]);
      const started = Date.now();
      await expect(refreshBatch([a, b])).rejects.toMatchObject({ code: '55P03' });
      expect(Date.now() - started).toBeLessThan(2000);
      expect((await pairRow(a.id)).revoked_at).toBeNull();
    } finally {
      await session.end();
    }
  });
});

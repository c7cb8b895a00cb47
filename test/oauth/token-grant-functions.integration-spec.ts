import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { startAuthServer, type AuthServerHarness } from '../support/starters/auth-server';

/**
 * The grants' SQL functions (token_refresh, token_exchange) asked directly against real
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

async function pair(user: string, overrides: { refreshExpiresIn?: number } = {}): Promise<Pair> {
  const p = { id: `tkp_${uid()}`, refresh: uid(), access: uid(), code: uid() };
  await db.query(
    `INSERT INTO auth.token_pairs (id, code_digest, user_id, client_id, scopes, access_digest, refresh_digest,
                                   access_expires_at, refresh_expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, now() + interval '1 hour', now() + make_interval(secs => $8))`,
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
  ended_access_digest: string | null;
}

/** Runs a statement and resolves its rows: the suite's pool by default, or a session of a test's own. */
type Query = (text: string, values: unknown[]) => Promise<unknown[]>;

async function refresh(
  p: Pick<Pair, 'refresh' | 'access'>,
  opts: { client?: string; secret?: string; scopes?: string[] | null; expected?: string | null } = {},
  query: Query = (text, values) => db.query(text, values),
): Promise<{ row: RefreshRow; next: { id: string; refresh: string } }> {
  const next = { id: `tkp_${uid()}`, refresh: uid() };
  const now = Date.now();
  const [row] = (await query(
    `SELECT * FROM auth.token_refresh($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [
      p.refresh,
      opts.client ?? CLIENT,
      opts.secret ?? SECRET,
      opts.scopes ?? null,
      next.id,
      uid(),
      next.refresh,
      new Date(now + HOUR),
      new Date(now + 90 * 24 * HOUR),
      new Date(now),
      opts.expected === undefined ? p.access : opts.expected,
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
    expect(row).toEqual({
      outcome: 'rotated',
      out_user_id: user,
      out_scopes: SCOPES,
      ended_access_digest: p.access,
    });
    expect(await pairRow(p.id)).toMatchObject({ revoked_reason: 'rotated', replaced_by: next.id });
    expect((await pairRow(next.id)).revoked_at).toBeNull();
  });

  it('narrows the scope of the new pair, and refuses a widening or an empty scope with the granted scopes', async () => {
    const user = await member();
    const p = await pair(user);
    for (const scopes of [['profile:read', 'vessels:read'], []]) {
      const { row, next } = await refresh(p, { scopes });
      expect(row).toMatchObject({ outcome: 'scope', out_scopes: SCOPES, ended_access_digest: null });
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

  it('answers revoked for a rotated token, and the successor is untouched', async () => {
    const user = await member();
    const p = await pair(user);
    const first = await refresh(p);
    expect(first.row.outcome).toBe('rotated');
    expect((await refresh(p)).row.outcome).toBe('revoked');
    expect((await pairRow(first.next.id)).revoked_at).toBeNull();
  });

  it('answers unexpected when the pair has another access token, and with no expectation rotates', async () => {
    const user = await member();
    const p = await pair(user);
    expect((await refresh(p, { expected: 'another-access-digest' })).row.outcome).toBe('unexpected');
    expect((await pairRow(p.id)).revoked_at).toBeNull();
    const { row } = await refresh(p, { expected: null });
    expect(row).toMatchObject({ outcome: 'rotated', ended_access_digest: p.access });
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
    expect(outcomes.filter((o) => o !== 'rotated').every((o) => o === 'revoked' || o === 'unusable')).toBe(
      true,
    );
    const winner = rows.find((r) => r.row.outcome === 'rotated')!;
    expect((await pairRow(p.id)).replaced_by).toBe(winner.next.id);
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
    `tkp_${uid()}`,
    uid(),
    uid(),
    new Date(now + HOUR),
    new Date(now + 90 * 24 * HOUR),
    new Date(now),
  ] as const;
}

type ExchangeArgs = ReturnType<typeof exchangeArgs>;

interface ExchangeRow {
  outcome: string;
  out_scopes: string[] | null;
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
): Promise<ExchangeRow & { pairId: string }> {
  const args = exchangeArgs({ code: digest, ...opts });
  return { ...(await exchangeAlone(args)), pairId: args[5] };
}

const consumed = async (digest: string) =>
  (
    (await db.query(`SELECT consumed_at FROM auth.authorization_codes WHERE code_digest = $1`, [digest])) as {
      consumed_at: Date | null;
    }[]
  )[0].consumed_at !== null;

describe('token_exchange', () => {
  it('issues the first pair of the family, then answers replayed', async () => {
    const user = await member();
    const c = await code(user);
    const first = await exchange(c);
    expect(first).toMatchObject({ outcome: 'issued', out_scopes: SCOPES });
    const [row] = (await db.query(`SELECT code_digest, user_id FROM auth.token_pairs WHERE id = $1`, [
      first.pairId,
    ])) as { code_digest: string; user_id: string }[];
    expect(row).toEqual({ code_digest: c, user_id: user });
    expect((await exchange(c)).outcome).toBe('replayed');
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
    expect(outcomes.filter((o) => o !== 'issued').every((o) => o === 'replayed')).toBe(true);
  });
});

interface BatchItem {
  p: Pick<Pair, 'refresh' | 'access'>;
  client?: string;
  secret?: string;
  expected?: string;
}

interface BatchRow extends RefreshRow {
  ord: number;
}

/** token_refresh_batch, as auth-server sends it when refreshes arrive while others are in flight. */
async function refreshBatch(
  items: BatchItem[],
  on: { query: DataSource['query'] } = db,
): Promise<{ rows: BatchRow[]; nexts: { id: string; refresh: string }[] }> {
  const nexts = items.map(() => ({ id: `tkp_${uid()}`, refresh: uid() }));
  const now = Date.now();
  const rows = (await on.query(
    `SELECT * FROM auth.token_refresh_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ORDER BY ord`,
    [
      items.map((i) => i.p.refresh),
      items.map((i) => i.client ?? CLIENT),
      items.map((i) => i.secret ?? SECRET),
      nexts.map((n) => n.id),
      items.map(() => uid()),
      nexts.map((n) => n.refresh),
      items.map(() => new Date(now + HOUR)),
      items.map(() => new Date(now + 90 * 24 * HOUR)),
      items.map(() => new Date(now)),
      items.map((i) => i.expected ?? i.p.access),
    ],
  )) as BatchRow[];
  return { rows, nexts };
}

describe('token_refresh_batch', () => {
  it('answers each rotation what it would have answered alone after the ones before it', async () => {
    const user = await member();
    const [live, other, twice] = [await pair(user), await pair(user), await pair(user)];
    const gone = await member();
    const disconnected = await pair(gone);
    await db.query(`UPDATE auth.consents SET revoked_at = now() WHERE user_id = $1`, [gone]);

    const { rows, nexts } = await refreshBatch([
      { p: live },
      { p: { refresh: `unknown-${uid()}`, access: 'x' } },
      { p: other, expected: 'another-access-digest' },
      { p: twice },
      { p: disconnected },
      { p: other, secret: 'not-the-digest' },
      { p: twice },
    ]);
    expect(rows.map((r) => [r.ord, r.outcome])).toEqual([
      [1, 'rotated'],
      [2, 'unusable'],
      [3, 'unexpected'],
      [4, 'rotated'],
      [5, 'disconnected'],
      [6, 'client'],
      // The same token again: the rotation before it in this batch has made it revoked.
      [7, 'revoked'],
    ]);
    expect(rows[0]).toMatchObject({
      out_user_id: user,
      out_scopes: SCOPES,
      ended_access_digest: live.access,
    });
    expect(await pairRow(live.id)).toMatchObject({ revoked_reason: 'rotated', replaced_by: nexts[0].id });
    expect(await pairRow(twice.id)).toMatchObject({ revoked_reason: 'rotated', replaced_by: nexts[3].id });
    expect((await pairRow(nexts[3].id)).revoked_at).toBeNull();
    expect((await pairRow(other.id)).revoked_at).toBeNull();
    expect((await pairRow(disconnected.id)).revoked_at).toBeNull();
    for (const i of [1, 2, 4, 5, 6]) expect(await pairRow(nexts[i].id)).toBeUndefined();
  });

  it('gives way to a revocation that waits on it: the batch fails after 100 ms and changed nothing', async () => {
    // The deadlock a batch could make: it has rotated one member's pair and waits for another's
    // consent row, which a disconnect holds while it waits to revoke that rotated pair.
    const first = await member();
    const second = await member();
    const [p1, p2] = [await pair(first), await pair(second)];
    const revocation = db.createQueryRunner();
    await revocation.connect();
    try {
      await revocation.startTransaction();
      await revocation.query(`SELECT 1 FROM auth.consents WHERE user_id = $1 FOR UPDATE`, [second]);
      const started = Date.now();
      const batch = refreshBatch([{ p: p1 }, { p: p2 }]).then(
        () => 'answered',
        (err: { code?: string }) => err.code,
      );
      await new Promise((r) => setTimeout(r, 30));
      await revocation.query(
        `UPDATE auth.token_pairs SET revoked_at = now(), revoked_reason = 'disconnected' WHERE id = $1`,
        [p1.id],
      );
      expect(await batch).toBe('55P03'); // lock_not_available: lock_timeout, not a deadlock (40P01)
      expect(Date.now() - started).toBeLessThan(900);
      await revocation.commitTransaction();
    } finally {
      if (revocation.isTransactionActive) await revocation.rollbackTransaction();
      await revocation.release();
    }
    // The revocation committed; the batch's rotation of p1 was rolled back with it.
    expect(await pairRow(p1.id)).toMatchObject({ revoked_reason: 'disconnected', replaced_by: null });
    expect((await pairRow(p2.id)).revoked_at).toBeNull();
    const { rows } = await refreshBatch([{ p: p1 }, { p: p2 }]);
    expect(rows.map((r) => r.outcome)).toEqual(['revoked', 'rotated']);
  });

  it('of concurrent batches holding one token exactly one rotation wins', async () => {
    const user = await member();
    const p = await pair(user);
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        refreshBatch([{ p }, { p }]).then(
          ({ rows, nexts }) => ({ outcomes: rows.map((r) => r.outcome), nexts }),
          (err: { code?: string }) => ({ outcomes: [err.code ?? 'error'], nexts: [] }),
        ),
      ),
    );
    const outcomes = results.flatMap((r) => r.outcomes);
    expect(outcomes.filter((o) => o === 'rotated')).toHaveLength(1);
    // The others lost the race (revoked), or gave way to the winner's lock (55P03) and would be sent alone.
    expect(outcomes.every((o) => ['rotated', 'revoked', 'unusable', '55P03'].includes(o))).toBe(true);
    const winner = results.find((r) => r.outcomes[0] === 'rotated')!;
    expect((await pairRow(p.id)).replaced_by).toBe(winner.nexts[0].id);
  });
});

/** A partner of its own, with the suite's redirect URI and secret. */
async function otherPartner(): Promise<string> {
  const other = `fn-exchanger-${uid()}`;
  await db.query(
    `INSERT INTO auth.partners (client_id, secret_digest, name, redirect_uris, allowed_scopes)
     VALUES ($1, $2, 'Exchanger', $3, $4)`,
    [other, SECRET, [REDIRECT], SCOPES],
  );
  return other;
}

interface ExchangeBatchRow extends ExchangeRow {
  ord: number;
}

/** token_exchange_batch, as auth-server sends it when exchanges arrive while another is in flight. */
async function exchangeBatch(
  items: ExchangeItem[],
  query: Query = (text, values) => db.query(text, values),
): Promise<{ rows: ExchangeBatchRow[]; args: ExchangeArgs[] }> {
  const args = items.map(exchangeArgs);
  const rows = (await query(
    `SELECT * FROM auth.token_exchange_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ORDER BY ord`,
    Array.from({ length: 11 }, (_, k) => args.map((a) => a[k])),
  )) as ExchangeBatchRow[];
  return { rows, args };
}

describe('token_exchange_batch', () => {
  /** One exchange of each case on codes of their own, the same code twice among them. */
  async function mixed(user: string, gone: string, other: string): Promise<ExchangeItem[]> {
    const twice = await code(user);
    return [
      { code: await code(user) },
      { code: `unknown-${uid()}` },
      { code: await code(user), challenge: 'another-challenge' },
      { code: await code(user), redirect: 'https://fn.example/other' },
      { code: await code(user), client: other },
      { code: twice },
      { code: await code(user), secret: 'not-the-digest' },
      { code: await code(user, -1000) },
      { code: twice },
      { code: await code(gone) },
    ];
  }

  /** What each exchange answered and left behind: its code consumed or not, the pair it stored. */
  async function effects(items: ExchangeItem[], args: ExchangeArgs[], rows: ExchangeRow[]) {
    return Promise.all(
      items.map(async (item, i) => {
        const [codeRow] = (await db.query(
          `SELECT consumed_at FROM auth.authorization_codes WHERE code_digest = $1`,
          [item.code],
        )) as { consumed_at: Date | null }[];
        const [pairRow] = (await db.query(
          `SELECT code_digest, user_id, client_id, scopes, access_digest, refresh_digest, revoked_at
             FROM auth.token_pairs WHERE id = $1`,
          [args[i][5]],
        )) as Record<string, unknown>[];
        return {
          outcome: rows[i].outcome,
          scopes: rows[i].out_scopes,
          consumed: codeRow ? codeRow.consumed_at !== null : 'no such code',
          pair: pairRow && {
            ...pairRow,
            // The batch's and the lone exchanges' codes and new tokens differ; each must be its own.
            code_digest: pairRow.code_digest === item.code,
            access_digest: pairRow.access_digest === args[i][6],
            refresh_digest: pairRow.refresh_digest === args[i][7],
          },
        };
      }),
    );
  }

  it('answers each exchange, and stores each pair, as token_exchange does alone after the ones before it', async () => {
    const user = await member();
    const gone = await member();
    await db.query(`UPDATE auth.consents SET revoked_at = now() WHERE user_id = $1`, [gone]);
    const other = await otherPartner();

    const batched = await mixed(user, gone, other);
    const { rows, args } = await exchangeBatch(batched);
    const alone = await mixed(user, gone, other);
    const aloneArgs = alone.map(exchangeArgs);
    const aloneRows: ExchangeRow[] = [];
    for (const a of aloneArgs) aloneRows.push(await exchangeAlone(a));

    expect(rows.map((r) => [r.ord, r.outcome])).toEqual([
      [1, 'issued'],
      [2, 'unknown'],
      [3, 'pkce'],
      [4, 'redirect_uri'],
      [5, 'other_client'],
      [6, 'issued'],
      [7, 'client'],
      [8, 'expired'],
      // The same code again: the exchange before it in this batch has consumed it.
      [9, 'replayed'],
      [10, 'disconnected'],
    ]);
    const done = await effects(batched, args, rows);
    expect(done[0]).toEqual({
      outcome: 'issued',
      scopes: SCOPES,
      consumed: true,
      pair: {
        code_digest: true,
        user_id: user,
        client_id: CLIENT,
        scopes: SCOPES,
        access_digest: true,
        refresh_digest: true,
        revoked_at: null,
      },
    });
    expect(done).toEqual(await effects(alone, aloneArgs, aloneRows));
  });

  it('gives way to a transaction that waits on it: the batch fails after 100 ms and consumed nothing', async () => {
    // The deadlock a batch could make: it has consumed one code and waits for a consent row that
    // another transaction holds while that one waits for the code (a replay's, say).
    const first = await member();
    const second = await member();
    const [c1, c2] = [await code(first), await code(second)];
    const holder = db.createQueryRunner();
    await holder.connect();
    try {
      await holder.startTransaction();
      await holder.query(`SELECT 1 FROM auth.consents WHERE user_id = $1 FOR UPDATE`, [second]);
      const started = Date.now();
      const batch = exchangeBatch([{ code: c1 }, { code: c2 }]).then(
        () => 'answered',
        (err: { code?: string }) => err.code,
      );
      await new Promise((r) => setTimeout(r, 30));
      await holder.query(`SELECT 1 FROM auth.authorization_codes WHERE code_digest = $1 FOR UPDATE`, [c1]);
      expect(await batch).toBe('55P03'); // lock_not_available: lock_timeout, not a deadlock (40P01)
      expect(Date.now() - started).toBeLessThan(900);
      await holder.commitTransaction();
    } finally {
      if (holder.isTransactionActive) await holder.rollbackTransaction();
      await holder.release();
    }
    expect(await consumed(c1)).toBe(false);
    expect(await consumed(c2)).toBe(false);
    const { rows } = await exchangeBatch([{ code: c1 }, { code: c2 }]);
    expect(rows.map((r) => r.outcome)).toEqual(['issued', 'issued']);
  });

  it('of concurrent batches holding one code exactly one exchange issues', async () => {
    const user = await member();
    const c = await code(user);
    const outcomes = (
      await Promise.all(
        Array.from({ length: 6 }, () =>
          exchangeBatch([{ code: c }, { code: c }]).then(
            ({ rows }) => rows.map((r) => r.outcome),
            (err: { code?: string }) => [err.code ?? 'error'],
          ),
        ),
      )
    ).flat();
    expect(outcomes.filter((o) => o === 'issued')).toHaveLength(1);
    // The others found it consumed, or gave way to the winner's lock (55P03) and would be sent alone.
    expect(outcomes.every((o) => ['issued', 'replayed', '55P03'].includes(o))).toBe(true);
  });
});

describe('the grant functions’ plans', () => {
  const FUNCTIONS = ['token_refresh', 'token_refresh_batch', 'token_exchange', 'token_exchange_batch'];

  it('are set to plan without sequential scans, whoever replaces them next', async () => {
    const rows = (await db.query(
      `SELECT proname, proconfig FROM pg_proc WHERE pronamespace = 'auth'::regnamespace AND proname = ANY($1)`,
      [FUNCTIONS],
    )) as { proname: string; proconfig: string[] | null }[];
    expect(rows.map((r) => r.proname).sort()).toEqual([...FUNCTIONS].sort());
    for (const row of rows) expect(row.proconfig).toContain('enable_seqscan=off');
    // The batches give way after 100 ms of waiting on a lock (their migrations say why).
    for (const row of rows.filter((r) => r.proname.endsWith('_batch')))
      expect(row.proconfig).toContain('lock_timeout=100ms');
  });

  it('find the pair by its index even in a session whose planner would rather scan the table', async () => {
    // A session of its own, whose plans nothing has cached, where an index looks a hundred times
    // dearer than it is: without the functions' own setting the pair's lookup would scan token_pairs.
    const session = new Client({ connectionString: auth.services.databaseUrl });
    await session.connect();
    try {
      await session.query(`SET random_page_cost = 400; SET cpu_index_tuple_cost = 5`);
      const user = await member();
      const p = await pair(user);
      await session.query('BEGIN');
      const { row } = await refresh(p, {}, async (text, values) => (await session.query(text, values)).rows);
      const { rows: scans } = await session.query<{ seq_scan: string }>(
        `SELECT seq_scan FROM pg_stat_xact_user_tables WHERE schemaname = 'auth' AND relname = 'token_pairs'`,
      );
      await session.query('ROLLBACK');
      expect(row.outcome).toBe('rotated');
      expect(scans.map((s) => Number(s.seq_scan))).toEqual([0]);
    } finally {
      await session.end();
    }
  });

  it('rotate a pair found by its primary key, never by a scan of an index of live pairs, even on a table never analyzed', async () => {
    // The rotating UPDATE as token_refresh has it, its variables made parameters, planned as
    // PL/pgSQL plans it once it has run five times (a generic plan) against an empty copy of
    // token_pairs with its indexes: a new database. The partial indexes on live pairs keep an entry
    // for every rotated pair until vacuum, so a plan that scans one reads them all at each refresh.
    const session = new Client({ connectionString: auth.services.databaseUrl });
    await session.connect();
    try {
      const { rows: fn } = await session.query<{ src: string }>(
        `SELECT prosrc AS src FROM pg_proc WHERE pronamespace = 'auth'::regnamespace AND proname = 'token_refresh'`,
      );
      const update = /UPDATE token_pairs t SET[\s\S]*?RETURNING [^;]*? INTO pair;/
        .exec(fn[0].src)![0]
        .replace(/ INTO pair;$/, '')
        .replace(/\bseen\.id\b/g, '$1')
        .replace(/\bp_at\b/g, '$2')
        .replace(/\bp_pair_id\b/g, '$3')
        .replace(/\bp_expected_access_digest\b/g, '$4')
        .replace(/\bp_scopes\b/g, '$5')
        .replace(/\bp_client_id\b/g, '$6');
      await session.query('BEGIN');
      await session.query(
        'CREATE TEMP TABLE token_pairs (LIKE auth.token_pairs INCLUDING ALL) ON COMMIT DROP',
      );
      await session.query(
        'SET LOCAL search_path = pg_temp, auth; SET LOCAL plan_cache_mode = force_generic_plan; SET LOCAL enable_seqscan = off',
      );
      await session.query(`PREPARE rotation(text, timestamptz, text, text, text[], text) AS ${update}`);
      const { rows } = await session.query<Record<string, string>>(
        `EXPLAIN EXECUTE rotation('tkp_a', now(), 'tkp_b', NULL, NULL, 'partner')`,
      );
      await session.query('ROLLBACK');
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(plan).toMatch(/Index Scan using token_pairs_pkey on token_pairs t\b/);
      expect(plan).not.toMatch(/_idx/);
    } finally {
      await session.end();
    }
  });

  it('find the codes and pairs of a batch of exchanges by their indexes in such a session too', async () => {
    const session = new Client({ connectionString: auth.services.databaseUrl });
    await session.connect();
    try {
      await session.query(`SET random_page_cost = 400; SET cpu_index_tuple_cost = 5`);
      const user = await member();
      const items = [{ code: await code(user) }, { code: `unknown-${uid()}` }, { code: await code(user) }];
      await session.query('BEGIN');
      const { rows } = await exchangeBatch(
        items,
        async (text, values) => (await session.query(text, values)).rows,
      );
      const { rows: scans } = await session.query<{ relname: string; seq_scan: string }>(
        `SELECT relname, seq_scan FROM pg_stat_xact_user_tables
          WHERE schemaname = 'auth' AND relname IN ('authorization_codes', 'token_pairs') ORDER BY relname`,
      );
      await session.query('ROLLBACK');
      expect(rows.map((r) => r.outcome)).toEqual(['issued', 'unknown', 'issued']);
      expect(scans.map((s) => [s.relname, Number(s.seq_scan)])).toEqual([
        ['authorization_codes', 0],
        ['token_pairs', 0],
      ]);
    } finally {
      await session.end();
    }
  });
});

import type { SandboxPartner } from '@svc/contracts';
import { sha256Hex, Sql } from '@svc/platform';
import { Client } from 'pg';
import { member, type TokenResponse } from '../support/factories';
import { startAuthServer, type AuthServerHarness } from '../support/starters/auth-server';
import { issueCode, type IssuedCode } from '../support/oauth/flow';
import { onboardPartner } from '../support/oauth/onboard';
import { expectOAuthError, expectTokenResponse, OAuthHttp } from '../support/oauth/oauth-http';
import { sample, scrape } from '../support/metrics';

/**
 * Group commit of code exchanges (docs/architecture.md, "Token endpoint", step 12) through the
 * token endpoint of an auth-server that sends one exchange statement at a time
 * (TOKEN_EXCHANGE_CONCURRENCY=1, the default), so that the exchanges arriving meanwhile go together
 * in `token_exchange_batch`: each is answered as it would have been alone, a code twice in one
 * batch is a replay that revokes what the first issued, and a batch waiting on a lock gives way.
 */
jest.setTimeout(90_000);

let auth: AuthServerHarness;
let http: OAuthHttp;

beforeAll(async () => {
  auth = await startAuthServer({ TOKEN_EXCHANGE_CONCURRENCY: '1' });
  http = new OAuthHttp(auth.url);
}, 90_000);

afterAll(async () => {
  await auth?.close();
});

const ALEX = member('alex.morgan@sandbox.test');
const OTHERS = [member('sam.lee@sandbox.test'), member('jo.kim@sandbox.test')];

/**
 * The exchange statements the replica sends from now on. `hold` sees each batch before it goes,
 * and may keep it (and so the slot) until the promise it returns settles.
 */
function exchangeStatements(hold?: (codeDigests: string[]) => Promise<void> | undefined) {
  const sent: { name: string; codeDigests: string[] }[] = [];
  const sql = auth.app.get(Sql);
  const prepared = sql.prepared.bind(sql);
  jest.spyOn(sql, 'prepared').mockImplementation(async (name, text, values) => {
    if (name === 'token_exchange_batch' || name === 'token_exchange') {
      const codeDigests = name === 'token_exchange' ? [values[0] as string] : (values[0] as string[]);
      sent.push({ name, codeDigests });
      if (name === 'token_exchange_batch') await hold?.(codeDigests);
    }
    return prepared(name, text, values);
  });
  return sent;
}

/** The replica's group-commit counters, both outcomes. */
async function counters() {
  const metrics = await scrape(auth.app);
  const read = (name: string, outcome: string) => sample(metrics, name, { outcome }) ?? 0;
  return {
    committed: read('token_exchange_batches_total', 'committed'),
    gaveWay: read('token_exchange_batches_total', 'gave_way'),
    codesCommitted: read('token_exchange_batched_codes_total', 'committed'),
    codesGaveWay: read('token_exchange_batched_codes_total', 'gave_way'),
  };
}

function since(before: Awaited<ReturnType<typeof counters>>, after: typeof before) {
  return {
    batches: after.committed + after.gaveWay - before.committed - before.gaveWay,
    codes: after.codesCommitted + after.codesGaveWay - before.codesCommitted - before.codesGaveWay,
    gaveWay: after.gaveWay - before.gaveWay,
    codesGaveWay: after.codesGaveWay - before.codesGaveWay,
  };
}

/** A promise that `fire()` resolves; `within` waits for it, and fails the test if it never comes. */
function signal(what: string) {
  let fire: () => void = () => undefined;
  const fired = new Promise<void>((resolve) => (fire = resolve));
  const within = async (ms: number) => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
    });
    try {
      await Promise.race([fired, late]);
    } finally {
      clearTimeout(timer);
    }
  };
  return { fired, fire, within };
}

const exchange = (p: SandboxPartner, c: IssuedCode) => http.exchange(p, c.code, c.verifier, c.redirectUri);

async function expectUsable(p: SandboxPartner, tokens: TokenResponse) {
  expect((await http.userinfo(tokens.access_token)).status).toBe(200);
  expectTokenResponse(await http.refresh(p, tokens.refresh_token));
}

afterEach(() => jest.restoreAllMocks());

describe('exchanges that arrive together go together', () => {
  it('answers 24 concurrent exchanges of distinct codes each with its own usable pair, in fewer statements', async () => {
    const p = await onboardPartner(auth, 'exchange-batch');
    const codes: IssuedCode[] = [];
    for (let i = 0; i < 24; i++)
      codes.push(await issueCode(auth.rpc, { partner: p, member: [ALEX, ...OTHERS][i % 3] }));
    const before = await counters();
    const sent = exchangeStatements();

    const answers = await Promise.all(codes.map((c) => exchange(p, c)));

    const issued = answers.map((res) => expectTokenResponse(res));
    expect(new Set(issued.map((t) => t.access_token)).size).toBe(24);
    const batches = sent.filter((s) => s.name === 'token_exchange_batch');
    expect(Math.max(...batches.map((b) => b.codeDigests.length))).toBeGreaterThan(1);
    // Every code went in exactly one batch, and nothing was sent alone.
    expect(batches.flatMap((b) => b.codeDigests).sort()).toEqual(codes.map((c) => sha256Hex(c.code)).sort());
    expect(sent.filter((s) => s.name === 'token_exchange')).toEqual([]);
    // What the replica counts for its operators: fewer statements than exchanges.
    const counted = since(before, await counters());
    expect(counted).toEqual({ batches: batches.length, codes: 24, gaveWay: 0, codesGaveWay: 0 });
    expect(counted.batches).toBeLessThan(counted.codes);
    for (const tokens of issued) await expectUsable(p, tokens);
  });

  it('a code sent twice at once in one batch: one 200, one invalid_grant, and the replay revokes what the first issued', async () => {
    const p = await onboardPartner(auth, 'exchange-batch');
    const pacer = await issueCode(auth.rpc, { partner: p, member: OTHERS[0] });
    const twice = await issueCode(auth.rpc, { partner: p, member: ALEX });
    // The pacer's statement holds the one slot until both exchanges of `twice` are queued behind it.
    const pacerDigest = sha256Hex(pacer.code);
    const pacerHeld = signal('the pacer sent in a batch');
    const gate = signal('the gate');
    const sent = exchangeStatements((digests) => {
      if (!digests.includes(pacerDigest)) return undefined;
      pacerHeld.fire();
      return gate.fired;
    });

    const first = exchange(p, pacer);
    await pacerHeld.within(5000);
    const answers = Promise.all([exchange(p, twice), exchange(p, twice)]);
    await new Promise((r) => setTimeout(r, 300));
    gate.fire();
    const [a, b] = await answers;

    expectTokenResponse(await first);
    const twiceDigest = sha256Hex(twice.code);
    expect(sent.filter((s) => s.name === 'token_exchange_batch').map((s) => s.codeDigests)).toEqual([
      [pacerDigest],
      [twiceDigest, twiceDigest],
    ]);
    const won = [a, b].filter((res) => res.status === 200);
    expect(won).toHaveLength(1);
    expectOAuthError(
      [a, b].find((res) => res.status !== 200)!,
      400,
      'invalid_grant',
    );
    // The second was a replay of a used code, so what the first issued is revoked (RFC 6749 §4.1.2).
    const tokens = expectTokenResponse(won[0]);
    expect((await http.userinfo(tokens.access_token)).status).toBe(401);
    expectOAuthError(await http.refresh(p, tokens.refresh_token), 400, 'invalid_grant');
  });
});

describe('a batch waiting on a lock', () => {
  it('gives way after 100 ms: the exchanges it held go alone, the others are not kept behind the lock, and each is answered right', async () => {
    const p = await onboardPartner(auth, 'exchange-batch');
    const [locked, alsoLocked] = [
      await issueCode(auth.rpc, { partner: p, member: ALEX }),
      await issueCode(auth.rpc, { partner: p, member: ALEX }),
    ];
    const others: IssuedCode[] = [];
    for (let i = 0; i < 6; i++) others.push(await issueCode(auth.rpc, { partner: p, member: OTHERS[i % 2] }));
    const before = await counters();
    const lockedDigest = sha256Hex(locked.code);
    const lockedSent = signal("Alex's first exchange sent in a batch");
    const sent = exchangeStatements((digests) => {
      if (digests.includes(lockedDigest)) lockedSent.fire();
      return undefined;
    });

    // Alex's consent row locked as a disconnect locks it, by a session of its own, for 400 ms.
    const session = new Client({ connectionString: auth.services.databaseUrl });
    await session.connect();
    let releasedAt = 0;
    try {
      await session.query('BEGIN');
      await session.query(
        `SELECT 1 FROM auth.consents WHERE user_id = $1 AND client_id = $2 AND revoked_at IS NULL FOR UPDATE`,
        [ALEX.user_id, p.client_id],
      );
      const timed = (c: IssuedCode) => exchange(p, c).then((res) => ({ res, at: Date.now() }));
      // Alex's first exchange takes the slot and waits; the rest queue behind it, one of them Alex's.
      const first = timed(locked);
      await lockedSent.within(5000);
      const rest = [...others.slice(0, 3), alsoLocked, ...others.slice(3)].map(timed);
      await new Promise((r) => setTimeout(r, 400));
      // Taken before the release: nothing that waited for the lock can answer earlier.
      releasedAt = Date.now();
      await session.query('ROLLBACK');
      const [alex, ...queued] = await Promise.all([first, ...rest]);

      // Every exchange is answered as alone, once the lock is gone.
      const answers = [alex, ...queued];
      const tokens = answers.map(({ res }) => expectTokenResponse(res));
      for (const t of tokens) await expectUsable(p, t);
      // Alex's waited for the lock; the other members' did not wait for it.
      expect(alex.at).toBeGreaterThanOrEqual(releasedAt);
      expect(queued[3].at).toBeGreaterThanOrEqual(releasedAt);
      for (const other of [...queued.slice(0, 3), ...queued.slice(4)])
        expect(other.at).toBeLessThan(releasedAt);
    } finally {
      // Ending the session also ends its transaction, should the test fail before the release.
      await session.end();
    }

    const counted = since(before, await counters());
    expect(counted.gaveWay).toBeGreaterThan(0);
    expect(counted.codes).toBe(8);
    // Each exchange of a batch that gave way was then sent alone.
    expect(sent.filter((s) => s.name === 'token_exchange')).toHaveLength(counted.codesGaveWay);
    expect(sent.filter((s) => s.name === 'token_exchange').flatMap((s) => s.codeDigests)).toContain(
      lockedDigest,
    );
  });
});

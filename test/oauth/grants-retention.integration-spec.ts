import { createHash } from 'node:crypto';
import { DataSource } from 'typeorm';
import { RetentionJob } from '@svc/platform';
import { EXPIRED_GRANT_GRACE_SECONDS } from '../../apps/auth-server/src/retention/retention.module';
import { startAuthServer, type AuthServerHarness } from '../support/starters/auth-server';
import {
  issueCode,
  issueTokens,
  type IssuedTokens,
  expectOAuthError,
  OAuthHttp,
} from '../support/oauth/flow';

/**
 * auth-server's pruning of expired grants, against real PostgreSQL: codes and token pairs a day
 * past expiry go, anything younger stays, and nothing live is touched. Grants are issued through
 * the real flow and then aged in the database.
 */
jest.setTimeout(30_000);

let auth: AuthServerHarness;
let http: OAuthHttp;
let db: DataSource;

beforeAll(async () => {
  auth = await startAuthServer();
  http = new OAuthHttp(auth.url);
  db = auth.app.get(DataSource);
}, 60_000);

afterAll(async () => {
  await auth?.close();
});

const digest = (value: string) => createHash('sha256').update(value).digest('hex');

/** Moves a pair's expiries `secondsAgo` into the past. */
async function agePair(issued: IssuedTokens, secondsAgo: number): Promise<void> {
  const rows = (await db.query(
    `UPDATE auth.token_pairs
        SET access_expires_at = now() - make_interval(secs => $2),
            refresh_expires_at = now() - make_interval(secs => $2)
      WHERE refresh_digest = $1 RETURNING id`,
    [digest(issued.tokens.refresh_token), secondsAgo],
  )) as unknown[];
  expect(returned(rows)).toHaveLength(1);
}

function returned(result: unknown[]): unknown[] {
  return Array.isArray(result[0]) ? (result[0] as unknown[]) : result;
}

async function pairExists(issued: IssuedTokens): Promise<boolean> {
  const rows = (await db.query('SELECT 1 FROM auth.token_pairs WHERE refresh_digest = $1', [
    digest(issued.tokens.refresh_token),
  ])) as unknown[];
  return rows.length === 1;
}

async function codeExists(code: string): Promise<boolean> {
  const rows = (await db.query('SELECT 1 FROM auth.authorization_codes WHERE code_digest = $1', [
    digest(code),
  ])) as unknown[];
  return rows.length === 1;
}

describe('pruning expired grants', () => {
  it('deletes token pairs and codes a day past expiry, and keeps younger and live ones', async () => {
    const longExpired = await issueTokens(auth.rpc, http);
    const recentlyExpired = await issueTokens(auth.rpc, http);
    const live = await issueTokens(auth.rpc, http);
    await agePair(longExpired, EXPIRED_GRANT_GRACE_SECONDS + 3600);
    await agePair(recentlyExpired, 3600);

    const oldCode = await issueCode(auth.rpc);
    const freshCode = await issueCode(auth.rpc);
    await db.query(
      `UPDATE auth.authorization_codes SET expires_at = now() - make_interval(secs => $2) WHERE code_digest = $1`,
      [digest(oldCode.code), EXPIRED_GRANT_GRACE_SECONDS + 60],
    );
    expect(await codeExists(oldCode.code)).toBe(true);

    const pruned = await auth.app.get(RetentionJob).pruneOnce();

    expect(pruned.token_pairs).toBeGreaterThanOrEqual(1);
    expect(pruned.codes).toBeGreaterThanOrEqual(1);
    expect(await pairExists(longExpired)).toBe(false);
    expect(await pairExists(recentlyExpired)).toBe(true);
    expect(await pairExists(live)).toBe(true);
    expect(await codeExists(oldCode.code)).toBe(false);
    expect(await codeExists(freshCode.code)).toBe(true);

    // The pruned refresh token is refused as it was before; the live pair still works.
    expectOAuthError(
      await http.refresh(longExpired.partner, longExpired.tokens.refresh_token),
      400,
      'invalid_grant',
    );
    expect((await http.userinfo(live.tokens.access_token)).status).toBe(200);
    // A pruned code is refused too.
    expectOAuthError(
      await http.exchange(oldCode.partner, oldCode.code, oldCode.verifier, oldCode.redirectUri),
      400,
      'invalid_grant',
    );
  });

  it('finds expired token pairs through an index on the refresh expiry', async () => {
    const runner = db.createQueryRunner();
    try {
      await runner.query('SET enable_seqscan = off');
      const plan = (await runner.query(
        `EXPLAIN SELECT id FROM auth.token_pairs WHERE refresh_expires_at < now() ORDER BY refresh_expires_at LIMIT 1000`,
      )) as { 'QUERY PLAN': string }[];
      expect(plan.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/token_pairs_refresh_expiry/);
    } finally {
      await runner.release();
    }
  });
});

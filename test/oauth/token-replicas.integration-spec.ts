import { createHash, randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { PartnersService } from '../../apps/auth-server/src/partners/partners.service';
import { TokensService } from '../../apps/auth-server/src/tokens/tokens.service';
import { member } from '../support/factories';
import { startAuthServer, type AuthServerHarness } from '../support/starters/auth-server';
import { issueTokens, expectOAuthError, expectTokenResponse, OAuthHttp } from '../support/oauth/flow';
import { createPartner } from '../support/app-factories';

/**
 * The token endpoint's fast path (docs/architecture.md, "Token endpoint") on two auth-server
 * replicas sharing one database and Redis: PostgreSQL stays the record of every rotation, the race
 * of one refresh token is decided there, and a partner a replica remembers as authenticated is
 * checked again by the grant's own statement, so a rotation or suspension made on the other
 * replica is seen by the very next request. Each test onboards a partner of its own.
 */
jest.setTimeout(60_000);

let a: AuthServerHarness;
let b: AuthServerHarness;
let httpA: OAuthHttp;
let httpB: OAuthHttp;

beforeAll(async () => {
  a = await startAuthServer();
  b = await startAuthServer();
  httpA = new OAuthHttp(a.url);
  httpB = new OAuthHttp(b.url);
}, 90_000);

afterAll(async () => {
  await a?.close();
  await b?.close();
});

const digest = (token: string) => createHash('sha256').update(token).digest('hex');

/** Deletes every key this run's Redis holds about `tokens` (cached answers and tombstones alike). */
async function forgetInRedis(tokens: readonly string[]): Promise<number> {
  const prefix = a.services.redisKeyPrefix;
  let deleted = 0;
  for (const token of tokens) {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, found] = await a.redis.scan(cursor, 'MATCH', `${prefix}*${digest(token)}*`, 'COUNT', 1000);
      cursor = next;
      keys.push(...found);
    } while (cursor !== '0');
    // The client adds the prefix itself.
    if (keys.length > 0) deleted += await a.redis.del(...keys.map((k) => k.slice(prefix.length)));
  }
  return deleted;
}

describe('durability: PostgreSQL is the record, not Redis', () => {
  it('rotated refresh tokens and their access tokens stay dead after Redis forgets them', async () => {
    const p = await createPartner(a, { label: 'replicas' });
    const { tokens } = await issueTokens(a.rpc, httpA, { partner: p });
    // Cached as active before the rotation.
    expect((await httpA.userinfo(tokens.access_token)).status).toBe(200);
    const next = expectTokenResponse(await httpA.refresh(p, tokens.refresh_token));
    const last = expectTokenResponse(await httpB.refresh(p, next.refresh_token));

    // The tombstones and any cached answers go: what is left to ask is the database.
    const forgotten = [tokens.access_token, tokens.refresh_token, next.access_token, next.refresh_token];
    expect(await forgetInRedis(forgotten)).toBeGreaterThan(0);

    expect((await httpB.userinfo(tokens.access_token)).status).toBe(401);
    expect((await httpA.userinfo(next.access_token)).status).toBe(401);
    expect((await httpA.userinfo(last.access_token)).status).toBe(200);
    // The first token, rotated twice over, is reuse (RFC 9700 §4.14.2): refused, and its family ends.
    expectOAuthError(await httpB.refresh(p, tokens.refresh_token), 400, 'invalid_grant');
    expectOAuthError(await httpA.refresh(p, next.refresh_token), 400, 'invalid_grant');
    expectOAuthError(await httpA.refresh(p, last.refresh_token), 400, 'invalid_grant');
  });
});

describe('pairs minted before the access token was derived from the refresh token', () => {
  it('still rotate, and their old access token is refused at once (tombstoned from the row before COMMIT)', async () => {
    const p = await createPartner(a, { label: 'replicas' });
    const sam = member('sam.lee@sandbox.test');
    // The flow records the consent; the pair below is one minted the old way, both tokens random.
    await issueTokens(a.rpc, httpA, { partner: p, member: sam });
    const legacy = {
      access: `at_${randomBytes(32).toString('base64url')}`,
      refresh: `rt_${randomBytes(32).toString('base64url')}`,
    };
    const codeDigest = digest(`legacy-code-${randomBytes(8).toString('hex')}`);
    await a.app.get(DataSource).query(
      `WITH family AS (
         INSERT INTO auth.token_families (code_digest, client_id, user_id) VALUES ($1, $2, $3)
       )
       INSERT INTO auth.token_pairs (id, code_digest, generation, user_id, client_id, scopes, access_digest,
                                     refresh_digest, access_expires_at, refresh_expires_at)
       VALUES ($4, $1, 0, $3, $2, ARRAY['profile:read'], $5, $6, now() + interval '1 hour',
               now() + interval '1 day')`,
      [
        codeDigest,
        p.client_id,
        sam.user_id,
        `tkp_${randomBytes(8).toString('hex')}`,
        digest(legacy.access),
        digest(legacy.refresh),
      ],
    );
    // Cached as active on B before the rotation.
    expect((await httpB.userinfo(legacy.access)).status).toBe(200);

    const next = expectTokenResponse(await httpA.refresh(p, legacy.refresh));

    expect((await httpB.userinfo(legacy.access)).status).toBe(401);
    expect((await httpB.userinfo(next.access_token)).status).toBe(200);
    // The new pair is a derived one, and rotates on the one-statement path.
    expectTokenResponse(await httpB.refresh(p, next.refresh_token));
  });
});

describe('the refresh race on two replicas (docs/rules.md, OAuth)', () => {
  it('of 12 concurrent refreshes with one token, spread over both replicas, exactly one wins', async () => {
    const p = await createPartner(a, { label: 'replicas' });
    const { tokens } = await issueTokens(a.rpc, httpA, { partner: p });
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? httpA : httpB).refresh(p, tokens.refresh_token)),
    );
    const won = answers.filter((r) => r.status === 200);
    expect(won).toHaveLength(1);
    for (const lost of answers.filter((r) => r.status !== 200)) expectOAuthError(lost, 400, 'invalid_grant');
    // The winner's pair stays valid, on either replica.
    const winner = expectTokenResponse(won[0]);
    expect((await httpB.userinfo(winner.access_token)).status).toBe(200);
    expectTokenResponse(await httpB.refresh(p, winner.refresh_token));
  });
});

describe('client authentication remembered per replica, checked again by the grant', () => {
  it('a secret rotated through one replica is refused by the next request on the other', async () => {
    const p = await createPartner(a, { label: 'replicas' });
    const { tokens } = await issueTokens(a.rpc, httpA, { partner: p });
    // Replica B authenticates the partner and remembers it.
    const first = expectTokenResponse(await httpB.refresh(p, tokens.refresh_token));

    const rotated = await a.app.get(PartnersService).rotateSecret(p.client_id);

    expectOAuthError(await httpB.refresh(p, first.refresh_token), 401, 'invalid_client');
    // Nothing was spent by the refused request: the token works with the new secret, on B.
    const withNew = { ...p, client_secret: rotated };
    const second = expectTokenResponse(await httpB.refresh(withNew, first.refresh_token));
    expectOAuthError(await httpA.refresh(p, second.refresh_token), 401, 'invalid_client');
  });

  it('a partner suspended through one replica is refused by the next request on the other', async () => {
    const p = await createPartner(a, { label: 'replicas' });
    const { tokens } = await issueTokens(a.rpc, httpA, { partner: p });
    const first = expectTokenResponse(await httpB.refresh(p, tokens.refresh_token));

    await a.app.get(TokensService).setPartnerSuspended(p.client_id, true);

    const refused = expectOAuthError(await httpB.refresh(p, first.refresh_token), 401, 'invalid_client');
    expect(refused.error_description).toBe('This partner account is suspended.');
  });

  it('a consent disconnected through one replica refuses the next refresh on the other', async () => {
    const p = await createPartner(a, { label: 'replicas' });
    const sam = member('sam.lee@sandbox.test');
    const { tokens } = await issueTokens(a.rpc, httpA, { partner: p, member: sam });
    const first = expectTokenResponse(await httpB.refresh(p, tokens.refresh_token));

    await expect(a.app.get(TokensService).disconnect(sam.user_id, p.client_id)).resolves.toBe(true);

    expectOAuthError(await httpB.refresh(p, first.refresh_token), 400, 'invalid_grant');
  });
});

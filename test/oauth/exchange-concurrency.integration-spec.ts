import type { SandboxPartner } from '@svc/contracts';
import { Client } from 'pg';
import { member, type TokenResponse } from '../support/factories';
import { startAuthServer, type AuthServerHarness } from '../support/starters/auth-server';
import {
  issueCode,
  type IssuedCode,
  expectOAuthError,
  expectTokenResponse,
  OAuthHttp,
} from '../support/oauth/flow';
import { createPartner } from '../support/app-factories';

/**
 * Code exchanges that arrive together (RFC 6749 §4.1.3): each is answered as it would have been
 * alone, a code sent twice at once is a replay that revokes what the first issued (RFC 9700 §4.5),
 * and one member's locked consent row holds only that member's exchanges.
 */
jest.setTimeout(90_000);

let auth: AuthServerHarness;
let http: OAuthHttp;

beforeAll(async () => {
  auth = await startAuthServer();
  http = new OAuthHttp(auth.url);
}, 90_000);

afterAll(async () => {
  await auth?.close();
});

const ALEX = member('alex.morgan@sandbox.test');
const OTHERS = [member('sam.lee@sandbox.test'), member('jo.kim@sandbox.test')];

const exchange = (p: SandboxPartner, c: IssuedCode) => http.exchange(p, c.code, c.verifier, c.redirectUri);

async function expectUsable(p: SandboxPartner, tokens: TokenResponse) {
  expect((await http.userinfo(tokens.access_token)).status).toBe(200);
  expectTokenResponse(await http.refresh(p, tokens.refresh_token));
}

describe('exchanges that arrive together', () => {
  it('answers 24 concurrent exchanges of distinct codes each with its own usable pair', async () => {
    const p = await createPartner(auth, { label: 'exchange-together' });
    const codes: IssuedCode[] = [];
    for (let i = 0; i < 24; i++)
      codes.push(await issueCode(auth.rpc, { partner: p, member: [ALEX, ...OTHERS][i % 3] }));

    const answers = await Promise.all(codes.map((c) => exchange(p, c)));

    const issued = answers.map((res) => expectTokenResponse(res));
    expect(new Set(issued.map((t) => t.access_token)).size).toBe(24);
    for (const tokens of issued) await expectUsable(p, tokens);
  });

  it('a code sent twice at once: one 200, one invalid_grant, and the replay revokes what the first issued', async () => {
    const p = await createPartner(auth, { label: 'exchange-together' });
    const twice = await issueCode(auth.rpc, { partner: p, member: ALEX });

    const [a, b] = await Promise.all([exchange(p, twice), exchange(p, twice)]);

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

describe("a member's consent row held by another transaction", () => {
  it("holds that member's exchanges until it is released, and no other member's", async () => {
    const p = await createPartner(auth, { label: 'exchange-together' });
    const locked = [
      await issueCode(auth.rpc, { partner: p, member: ALEX }),
      await issueCode(auth.rpc, { partner: p, member: ALEX }),
    ];
    const others: IssuedCode[] = [];
    for (let i = 0; i < 6; i++) others.push(await issueCode(auth.rpc, { partner: p, member: OTHERS[i % 2] }));

    // Alex's consent row locked as a disconnect locks it, by a session of its own, for 400 ms.
    const session = new Client({ connectionString: auth.services.databaseUrl });
    await session.connect();
    try {
      await session.query('BEGIN');
      await session.query(
        `SELECT 1 FROM auth.consents WHERE user_id = $1 AND client_id = $2 AND revoked_at IS NULL FOR UPDATE`,
        [ALEX.user_id, p.client_id],
      );
      const timed = (c: IssuedCode) => exchange(p, c).then((res) => ({ res, at: Date.now() }));
      const alex = locked.map(timed);
      const rest = others.map(timed);
      await new Promise((r) => setTimeout(r, 400));
      // Taken before the release: nothing that waited for the lock can answer earlier.
      const releasedAt = Date.now();
      await session.query('ROLLBACK');
      const [alexAnswers, otherAnswers] = await Promise.all([Promise.all(alex), Promise.all(rest)]);

      // Every exchange is answered as alone, once the lock is gone.
      for (const { res } of [...alexAnswers, ...otherAnswers])
        await expectUsable(p, expectTokenResponse(res));
      for (const { at } of alexAnswers) expect(at).toBeGreaterThanOrEqual(releasedAt);
      for (const { at } of otherAnswers) expect(at).toBeLessThan(releasedAt);
    } finally {
      // Ending the session also ends its transaction, should the test fail before the release.
      await session.end();
    }
  });
});

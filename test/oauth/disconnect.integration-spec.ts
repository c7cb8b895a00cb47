import { AUTH_CONSENTS_LIST, AUTH_CONSENTS_REVOKE } from '@svc/contracts';
import { member, partner } from '../support/factories';
import type { HttpResponse } from '../support/http';
import { useAuthServer } from '../support/starters/auth-server';
import {
  issueCode,
  issueTokens,
  expectOAuthError,
  expectTokenResponse,
  scopeSet,
} from '../support/oauth/flow';

/**
 * The member disconnects a partner (docs/rules.md, States and transitions: "All tokens of that client for that
 * user revoked at once"; docs/rules.md, Consent UI): auth.consents.list / auth.consents.revoke.
 */
jest.setTimeout(60_000);

const { auth, http } = useAuthServer();
const A = partner('sandbox-partner');
const B = partner('sandbox-partner-b');
const alex = member('alex.morgan@sandbox.test');
const sam = member('sam.lee@sandbox.test');
const jo = member('jo.kim@sandbox.test');

const list = (userId: string) => auth.rpc.call(AUTH_CONSENTS_LIST, { user_id: userId });
const disconnect = (userId: string, clientId: string) =>
  auth.rpc.call(AUTH_CONSENTS_REVOKE, { user_id: userId, client_id: clientId });

async function accessIsDead(accessToken: string): Promise<boolean> {
  return (await http.userinfo(accessToken)).status === 401;
}

/** Spends the refresh token if it is live (only for tokens that must be dead). */
async function refreshIsDead(p: typeof A, refreshToken: string): Promise<HttpResponse> {
  return http.refresh(p, refreshToken);
}

describe('auth.consents.list', () => {
  it('lists each connected partner with its name, granted scopes and the date connected', async () => {
    const before = Date.now();
    await issueTokens(auth.rpc, http, { member: jo, partner: A, scope: 'profile:read seatime:read' });
    await issueTokens(auth.rpc, http, { member: jo, partner: B, scope: 'profile:read' });
    const { connections } = await list(jo.user_id);
    const a = connections.find((c) => c.client_id === A.client_id);
    const b = connections.find((c) => c.client_id === B.client_id);
    expect(a?.client_name).toBe('Sandbox Partner');
    expect(b?.client_name).toBe('Sandbox Partner B');
    expect(scopeSet(a?.scopes.join(' '))).toEqual(expect.arrayContaining(['profile:read', 'seatime:read']));
    expect(scopeSet(b?.scopes.join(' '))).toEqual(['profile:read']);
    expect(a?.connected_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    expect(Date.parse(a!.connected_at)).toBeLessThanOrEqual(Date.now() + 1000);
    expect(Date.parse(b!.connected_at)).toBeGreaterThanOrEqual(before - 60_000);
    expect(connections.filter((c) => c.client_id === A.client_id)).toHaveLength(1);
  });
});

describe('auth.consents.revoke (disconnect)', () => {
  it('revokes every token of that partner for that member at once, and nothing else', async () => {
    const one = await issueTokens(auth.rpc, http, { member: alex, partner: A });
    const two = await issueTokens(auth.rpc, http, { member: alex, partner: A, scope: 'vessels:read' });
    const rotated = expectTokenResponse(await http.refresh(A, two.tokens.refresh_token));
    const otherPartner = await issueTokens(auth.rpc, http, {
      member: alex,
      partner: B,
      scope: 'profile:read',
    });
    const otherMember = await issueTokens(auth.rpc, http, { member: sam, partner: A });

    await expect(disconnect(alex.user_id, A.client_id)).resolves.toEqual({ revoked: true });

    for (const access of [one.tokens.access_token, rotated.access_token]) {
      expect(await accessIsDead(access)).toBe(true);
    }
    for (const refresh of [one.tokens.refresh_token, rotated.refresh_token]) {
      expectOAuthError(await refreshIsDead(A, refresh), 400, 'invalid_grant');
    }
    expect((await http.userinfo(otherPartner.tokens.access_token)).status).toBe(200);
    expect((await http.userinfo(otherMember.tokens.access_token)).status).toBe(200);

    const { connections } = await list(alex.user_id);
    expect(connections.map((c) => c.client_id)).not.toContain(A.client_id);
    expect(connections.map((c) => c.client_id)).toContain(B.client_id);
  });

  it('a second disconnect answers revoked: false', async () => {
    await issueTokens(auth.rpc, http, { member: jo, partner: A });
    await expect(disconnect(jo.user_id, A.client_id)).resolves.toEqual({ revoked: true });
    await expect(disconnect(jo.user_id, A.client_id)).resolves.toEqual({ revoked: false });
  });

  it('a code issued before the disconnect cannot be exchanged after it', async () => {
    const issued = await issueCode(auth.rpc, { member: jo, partner: A });
    await disconnect(jo.user_id, A.client_id);
    const res = await http.exchange(A, issued.code, issued.verifier, issued.redirectUri);
    expectOAuthError(res, 400, 'invalid_grant');
  });

  it('the member can connect again afterwards, with a fresh consent', async () => {
    await issueTokens(auth.rpc, http, { member: jo, partner: A });
    await disconnect(jo.user_id, A.client_id);
    const again = await issueTokens(auth.rpc, http, { member: jo, partner: A });
    expect((await http.userinfo(again.tokens.access_token)).status).toBe(200);
    expect((await list(jo.user_id)).connections.map((c) => c.client_id)).toContain(A.client_id);
  });
});

describe('a disconnect racing refreshes and a code exchange', () => {
  it('leaves no live token of that partner for that member, whatever the interleaving', async () => {
    const rounds = 12;
    const survivors: string[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const { tokens } = await issueTokens(auth.rpc, http, { member: sam, partner: A });
      const pending = await issueCode(auth.rpc, { member: sam, partner: A });
      const access = [tokens.access_token];
      const refresh = [tokens.refresh_token];
      const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));
      const collect = (res: HttpResponse) => {
        if (res.status !== 200) return;
        const t = res.json<{ access_token: string; refresh_token: string }>();
        access.push(t.access_token);
        refresh.push(t.refresh_token);
      };
      // Stagger the start of each side by a few milliseconds, differently each round.
      const d = round % 4;
      await Promise.all([
        // RPC has a longer path than HTTP: the disconnect sometimes starts later, so either side wins.
        delay(d * 2).then(() => disconnect(sam.user_id, A.client_id)),
        delay(3 - d)
          .then(() => http.refresh(A, tokens.refresh_token))
          .then(async (res) => {
            collect(res);
            // A winner that refreshes again at once must not outlive the disconnect either.
            if (res.status === 200)
              collect(await http.refresh(A, res.json<{ refresh_token: string }>().refresh_token));
          }),
        delay((round * 7) % 5)
          .then(() => http.refresh(A, tokens.refresh_token))
          .then(collect),
        delay(d % 2)
          .then(() => http.exchange(A, pending.code, pending.verifier, pending.redirectUri))
          .then(collect),
      ]);
      for (const token of access)
        if (!(await accessIsDead(token))) survivors.push(`round ${round}: access token`);
      for (const token of refresh) {
        const res = await refreshIsDead(A, token);
        if (res.status === 200) {
          survivors.push(`round ${round}: refresh token`);
          collect(res);
        }
      }
    }
    expect(survivors).toEqual([]);
    expect((await list(sam.user_id)).connections.map((c) => c.client_id)).not.toContain(A.client_id);
  });
});

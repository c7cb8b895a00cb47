import { SCOPES } from '@svc/contracts';
import { member, partner, unknownToken } from '../support/factories';
import { request } from '../support/http';
import { useAuthServer } from '../support/starters/auth-server';
import { issueTokens } from '../support/oauth/flow';

/**
 * GET /.well-known/oauth-authorization-server (RFC 8414 §2-3) and GET /oauth/userinfo
 * (docs/rules.md: any live token; `sub` always; `name`, `picture`, `updated_at` with profile:read).
 */
jest.setTimeout(30_000);

const { auth, http } = useAuthServer();
const A = partner('sandbox-partner');
const alex = member('alex.morgan@sandbox.test');

describe('authorization server metadata (RFC 8414)', () => {
  it('describes the server at its well-known URI (§3.2), with endpoints under the issuer', async () => {
    const res = await request(`${auth.url}/.well-known/oauth-authorization-server`);
    expect(res.status).toBe(200);
    expect(res.header('content-type')).toMatch(/^application\/json/);
    const meta = res.json<Record<string, unknown>>();
    const base = auth.issuer;
    expect(meta).toMatchObject({
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      revocation_endpoint: `${base}/oauth/revoke`,
      userinfo_endpoint: `${base}/oauth/userinfo`,
      code_challenge_methods_supported: ['S256'],
      response_types_supported: ['code'],
      authorization_response_iss_parameter_supported: true,
    });
    expect([...(meta.scopes_supported as string[])].sort()).toEqual([...SCOPES].sort());
    expect([...(meta.grant_types_supported as string[])].sort()).toEqual([
      'authorization_code',
      'refresh_token',
    ]);
    expect(meta.token_endpoint_auth_methods_supported).toEqual(
      expect.arrayContaining(['client_secret_post', 'client_secret_basic']),
    );
    expect(meta.token_endpoint_auth_methods_supported).not.toContain('none');
    if (meta.revocation_endpoint_auth_methods_supported !== undefined) {
      expect(meta.revocation_endpoint_auth_methods_supported).toEqual(
        expect.arrayContaining(['client_secret_post', 'client_secret_basic']),
      );
    }
    if (meta.response_modes_supported !== undefined) {
      expect(meta.response_modes_supported).not.toContain('fragment');
    }
  });

  it('has an issuer with no query or fragment (RFC 8414 §2)', async () => {
    const meta = (await request(`${auth.url}/.well-known/oauth-authorization-server`)).json<{
      issuer: string;
    }>();
    const issuer = new URL(meta.issuer);
    expect(issuer.search).toBe('');
    expect(issuer.hash).toBe('');
  });
});

describe('GET /oauth/userinfo', () => {
  it('with profile:read: sub, name, picture, updated_at', async () => {
    const { tokens } = await issueTokens(auth.rpc, http, { scope: 'profile:read' });
    const res = await http.userinfo(tokens.access_token);
    expect(res.status).toBe(200);
    expect(res.header('content-type')).toMatch(/^application\/json/);
    const body = res.json<Record<string, unknown>>();
    expect(body.sub).toBe(alex.user_id);
    expect(body.name).toBe(alex.name);
    expect(body).toHaveProperty('picture');
    if (body.picture !== null) expect(typeof body.picture).toBe('string');
    expect(body).toHaveProperty('updated_at');
  });

  it('without profile:read: sub only, no name, picture or updated_at', async () => {
    const { tokens } = await issueTokens(auth.rpc, http, { scope: 'seatime:read vessels:read' });
    const res = await http.userinfo(tokens.access_token);
    expect(res.status).toBe(200);
    const body = res.json<Record<string, unknown>>();
    expect(body.sub).toBe(alex.user_id);
    for (const claim of ['name', 'picture', 'updated_at']) expect(body).not.toHaveProperty(claim);
  });

  it('no token → 401 with a Bearer challenge (RFC 6750 §3)', async () => {
    const res = await request(`${auth.url}/oauth/userinfo`);
    expect(res.status).toBe(401);
    expect(res.header('www-authenticate')).toMatch(/^Bearer\b/);
  });

  it('an unknown token → 401 invalid_token (RFC 6750 §3.1)', async () => {
    const res = await http.userinfo(unknownToken());
    expect(res.status).toBe(401);
    expect(res.header('www-authenticate')).toMatch(/^Bearer\b.*error="invalid_token"/);
  });

  it('a refresh token is not an access token → 401', async () => {
    const { tokens } = await issueTokens(auth.rpc, http);
    expect((await http.userinfo(tokens.refresh_token)).status).toBe(401);
  });

  it('the client secret as a bearer token → 401', async () => {
    expect((await http.userinfo(A.client_secret)).status).toBe(401);
  });
});

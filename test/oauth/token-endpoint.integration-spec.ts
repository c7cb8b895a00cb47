import { codeVerifier, partner, pkcePair, s256, unknownToken } from '../support/factories';
import { request } from '../support/http';
import { useAuthServer } from '../support/starters/auth-server';
import {
  issueCode,
  issueTokens,
  expectOAuthError,
  expectTokenResponse,
  scopeSet,
} from '../support/oauth/flow';
import { sample, scrape } from '../support/metrics';

/**
 * POST /oauth/token (RFC 6749 §4.1.3, §5, §6; RFC 7636 §4.5-4.6): the token response and every
 * row of the interface's OAuth error table that the token endpoint can give.
 */
jest.setTimeout(30_000);

const { auth, http } = useAuthServer();
const A = partner('sandbox-partner');
const B = partner('sandbox-partner-b');

describe('token response (RFC 6749 §5.1)', () => {
  it('exchanges a code for exactly access_token, token_type Bearer, expires_in 3600, refresh_token, scope; no-store', async () => {
    const issued = await issueCode(auth.rpc, { scope: 'profile:read vessels:read' });
    const tokens = expectTokenResponse(
      await http.exchange(A, issued.code, issued.verifier, issued.redirectUri),
    );
    expect(scopeSet(tokens.scope)).toEqual(['profile:read', 'vessels:read']);
    const info = await http.userinfo(tokens.access_token);
    expect(info.status).toBe(200);
    expect(info.json<{ sub: string }>().sub).toBe(issued.member.user_id);
  });

  it('accepts client authentication with HTTP Basic (RFC 6749 §2.3.1)', async () => {
    const issued = await issueCode(auth.rpc);
    const res = await http.token(
      {
        grant_type: 'authorization_code',
        code: issued.code,
        redirect_uri: issued.redirectUri,
        code_verifier: issued.verifier,
      },
      { basic: [A.client_id, A.client_secret] },
    );
    expectTokenResponse(res);
  });

  it('accepts Basic client authentication on the refresh grant too, and answers it with the same shape', async () => {
    const { tokens } = await issueTokens(auth.rpc, http);
    const res = await http.token(
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
      { basic: [A.client_id, A.client_secret] },
    );
    const next = expectTokenResponse(res);
    expect(next.access_token).not.toBe(tokens.access_token);
    expect(next.refresh_token).not.toBe(tokens.refresh_token);
  });

  it('accepts code_verifier of 43 and of 128 characters (RFC 7636 §4.1)', async () => {
    for (const length of [43, 128]) {
      const pair = pkcePair(length);
      const issued = await issueCodeWithPkce(pair.challenge);
      expectTokenResponse(await http.exchange(A, issued.code, pair.verifier, issued.redirectUri));
    }
  });
});

/** A code whose request carried a challenge of the test's choosing. */
function issueCodeWithPkce(challenge: string) {
  return issueCode(auth.rpc, { overrides: { code_challenge: challenge } });
}

describe('invalid_request: missing or malformed parameter (RFC 6749 §5.2)', () => {
  const required = ['grant_type', 'code', 'redirect_uri', 'code_verifier'] as const;

  it.each(required)('authorization_code without %s → 400 invalid_request', async (missing) => {
    const issued = await issueCode(auth.rpc);
    const fields: Record<string, string> = {
      grant_type: 'authorization_code',
      code: issued.code,
      redirect_uri: issued.redirectUri,
      code_verifier: issued.verifier,
      client_id: A.client_id,
      client_secret: A.client_secret,
    };
    delete fields[missing];
    expectOAuthError(await http.token(fields), 400, 'invalid_request');
  });

  it.each([
    ['42 characters (RFC 7636 §4.1: at least 43)', 42],
    ['129 characters (RFC 7636 §4.1: at most 128)', 129],
  ])('code_verifier of %s → 400 invalid_request', async (_what, length) => {
    // The challenge matches the verifier, so only its length is wrong.
    const pair = pkcePair(length);
    const issued = await issueCodeWithPkce(pair.challenge);
    expectOAuthError(
      await http.exchange(A, issued.code, pair.verifier, issued.redirectUri),
      400,
      'invalid_request',
    );
  });

  it('code_verifier with characters outside RFC 7636 §4.1 unreserved set → 400 invalid_request', async () => {
    const verifier = `${codeVerifier(50)}+/= é`;
    const issued = await issueCodeWithPkce(s256(verifier));
    expectOAuthError(
      await http.exchange(A, issued.code, verifier, issued.redirectUri),
      400,
      'invalid_request',
    );
  });

  it('refresh_token grant without refresh_token → 400 invalid_request', async () => {
    expectOAuthError(
      await http.token({
        grant_type: 'refresh_token',
        client_id: A.client_id,
        client_secret: A.client_secret,
      }),
      400,
      'invalid_request',
    );
  });

  it('a repeated parameter → 400 invalid_request (RFC 6749 §3.2: parameters MUST NOT be included more than once)', async () => {
    const issued = await issueCode(auth.rpc);
    const res = await http.token([
      ['grant_type', 'authorization_code'],
      ['code', issued.code],
      ['code', issued.code],
      ['redirect_uri', issued.redirectUri],
      ['code_verifier', issued.verifier],
      ['client_id', A.client_id],
      ['client_secret', A.client_secret],
    ]);
    expectOAuthError(res, 400, 'invalid_request');
  });

  it('two client authentication methods in one request → 400 invalid_request (RFC 6749 §5.2)', async () => {
    const issued = await issueCode(auth.rpc);
    const res = await http.token(
      {
        grant_type: 'authorization_code',
        code: issued.code,
        redirect_uri: issued.redirectUri,
        code_verifier: issued.verifier,
        client_id: A.client_id,
        client_secret: A.client_secret,
      },
      { basic: [A.client_id, A.client_secret] },
    );
    expectOAuthError(res, 400, 'invalid_request');
  });

  it.each(['/oauth/token%zz', '/oauth/to%E0%A4%Aken', '/oauth/revoke%'])(
    'a malformed escape in the path (%s) → 400 invalid_request in the RFC 6749 shape, not a Problem',
    async (path) => {
      const res = await request(`${auth.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=refresh_token&refresh_token=x',
      });
      expectOAuthError(res, 400, 'invalid_request');
      expect(res.header('cache-control')).toBe('no-store');
      expect(res.header('x-request-id')).toBeTruthy();
    },
  );

  it('GET /oauth/token is not a token request (RFC 6749 §3.2: POST only) and is never a 200', async () => {
    const res = await request(`${auth.url}/oauth/token?grant_type=refresh_token`);
    expect([400, 404, 405]).toContain(res.status);
  });
});

describe('invalid_client → 401 (RFC 6749 §5.2)', () => {
  async function exchangeFields() {
    const issued = await issueCode(auth.rpc);
    return {
      grant_type: 'authorization_code',
      code: issued.code,
      redirect_uri: issued.redirectUri,
      code_verifier: issued.verifier,
    };
  }

  it('wrong client_secret in the form body → 401 invalid_client', async () => {
    const res = await http.token({
      ...(await exchangeFields()),
      client_id: A.client_id,
      client_secret: 'nope',
    });
    expectOAuthError(res, 401, 'invalid_client');
  });

  it.each([
    ['client_id', '\u0000'],
    ['client_id', 'sandbox-partner\u0000'],
  ])('a %s holding a NUL → 401 invalid_client, never a 500', async (_field, clientId) => {
    const res = await http.token({
      ...(await exchangeFields()),
      client_id: clientId,
      client_secret: A.client_secret,
    });
    expectOAuthError(res, 401, 'invalid_client');
  });

  it('unknown client_id in the form body → 401 invalid_client', async () => {
    const res = await http.token({
      ...(await exchangeFields()),
      client_id: 'no-such-client',
      client_secret: 'x',
    });
    expectOAuthError(res, 401, 'invalid_client');
  });

  it('another partner’s secret → 401 invalid_client', async () => {
    const res = await http.token({
      ...(await exchangeFields()),
      client_id: A.client_id,
      client_secret: B.client_secret,
    });
    expectOAuthError(res, 401, 'invalid_client');
  });

  it('no client authentication at all → 401 invalid_client', async () => {
    expectOAuthError(await http.token(await exchangeFields()), 401, 'invalid_client');
  });

  it('client_id without client_secret → 401 invalid_client', async () => {
    const res = await http.token({ ...(await exchangeFields()), client_id: A.client_id });
    expectOAuthError(res, 401, 'invalid_client');
  });

  it('wrong secret over HTTP Basic → 401 invalid_client with WWW-Authenticate: Basic', async () => {
    const res = await http.token(await exchangeFields(), { basic: [A.client_id, 'wrong-secret'] });
    expectOAuthError(res, 401, 'invalid_client');
    expect(res.header('www-authenticate')).toMatch(/^Basic\b/i);
  });

  it('unknown client over HTTP Basic → 401 invalid_client with WWW-Authenticate: Basic', async () => {
    const res = await http.token(await exchangeFields(), { basic: ['no-such-client', 'x'] });
    expectOAuthError(res, 401, 'invalid_client');
    expect(res.header('www-authenticate')).toMatch(/^Basic\b/i);
  });

  it('an empty Basic header → 401 invalid_client with WWW-Authenticate: Basic (RFC 6749 §5.2)', async () => {
    const res = await http.token(await exchangeFields(), { headers: { authorization: 'Basic ' } });
    expectOAuthError(res, 401, 'invalid_client');
    expect(res.header('www-authenticate')).toMatch(/^Basic\b/i);
  });

  it('malformed Basic header → 401 invalid_client with WWW-Authenticate: Basic', async () => {
    const res = await http.token(await exchangeFields(), {
      headers: { authorization: 'Basic !!!not-base64' },
    });
    expectOAuthError(res, 401, 'invalid_client');
  });

  it('a failed client authentication does not consume the code', async () => {
    const issued = await issueCode(auth.rpc);
    const fields = {
      grant_type: 'authorization_code',
      code: issued.code,
      redirect_uri: issued.redirectUri,
      code_verifier: issued.verifier,
    };
    expectOAuthError(
      await http.token({ ...fields, client_id: A.client_id, client_secret: 'nope' }),
      401,
      'invalid_client',
    );
    expectTokenResponse(
      await http.token({ ...fields, client_id: A.client_id, client_secret: A.client_secret }),
    );
  });
});

describe('invalid_grant (RFC 6749 §5.2, §4.1.3; RFC 7636 §4.6)', () => {
  it('an unknown code → 400 invalid_grant', async () => {
    const res = await http.exchange(A, unknownToken(), codeVerifier(), A.redirect_uris[0]);
    expectOAuthError(res, 400, 'invalid_grant');
  });

  it('a replayed code → 400 invalid_grant', async () => {
    const issued = await issueCode(auth.rpc);
    expectTokenResponse(await http.exchange(A, issued.code, issued.verifier, issued.redirectUri));
    expectOAuthError(
      await http.exchange(A, issued.code, issued.verifier, issued.redirectUri),
      400,
      'invalid_grant',
    );
  });

  it('another registered redirect_uri than the one authorized → 400 invalid_grant', async () => {
    const issued = await issueCode(auth.rpc, { redirectUri: A.redirect_uris[0] });
    const res = await http.exchange(A, issued.code, issued.verifier, A.redirect_uris[1]);
    expectOAuthError(res, 400, 'invalid_grant');
  });

  it('the authorized redirect_uri with a trailing slash → 400 invalid_grant', async () => {
    const issued = await issueCode(auth.rpc);
    const res = await http.exchange(A, issued.code, issued.verifier, `${issued.redirectUri}/`);
    expectOAuthError(res, 400, 'invalid_grant');
  });

  it('PKCE verifier that does not match the challenge → 400 invalid_grant (RFC 7636 §4.6)', async () => {
    const issued = await issueCode(auth.rpc);
    const res = await http.exchange(A, issued.code, pkcePair().verifier, issued.redirectUri);
    expectOAuthError(res, 400, 'invalid_grant');
  });

  it('the challenge itself sent as the verifier (a "plain" downgrade) → 400 invalid_grant', async () => {
    const pair = pkcePair();
    const issued = await issueCodeWithPkce(pair.challenge);
    const res = await http.exchange(A, issued.code, pair.challenge, issued.redirectUri);
    expectOAuthError(res, 400, 'invalid_grant');
  });

  it('a code issued to another client, with that client’s valid credentials → 400 invalid_grant', async () => {
    const issued = await issueCode(auth.rpc, { partner: A, scope: 'profile:read' });
    const res = await http.exchange(B, issued.code, issued.verifier, issued.redirectUri);
    expectOAuthError(res, 400, 'invalid_grant');
    // The foreign client got no tokens. (Whether the code stays usable for its rightful client
    // afterwards is left open: RFC 6749 §4.1.3 only requires refusing the foreign client.)
  });

  it('an unknown refresh token → 400 invalid_grant', async () => {
    expectOAuthError(await http.refresh(A, unknownToken()), 400, 'invalid_grant');
  });

  it('an access token sent as the refresh token → 400 invalid_grant', async () => {
    const { tokens } = await issueTokens(auth.rpc, http);
    expectOAuthError(await http.refresh(A, tokens.access_token), 400, 'invalid_grant');
  });

  it('a refresh token sent as a code → 400 invalid_grant', async () => {
    const issued = await issueTokens(auth.rpc, http);
    const res = await http.exchange(A, issued.tokens.refresh_token, issued.verifier, issued.redirectUri);
    expectOAuthError(res, 400, 'invalid_grant');
  });

  it('a refresh token of another client, with that client’s valid credentials → 400 invalid_grant (RFC 6749 §6)', async () => {
    const { tokens } = await issueTokens(auth.rpc, http, { partner: A, scope: 'profile:read' });
    expectOAuthError(await http.refresh(B, tokens.refresh_token), 400, 'invalid_grant');
    // The stranger's attempt did not spend it.
    expectTokenResponse(await http.refresh(A, tokens.refresh_token));
  });

  it('a revoked refresh token → 400 invalid_grant', async () => {
    const { tokens } = await issueTokens(auth.rpc, http);
    const revoked = await http.revokeToken(A, tokens.refresh_token);
    expect(revoked.status).toBe(200);
    expectOAuthError(await http.refresh(A, tokens.refresh_token), 400, 'invalid_grant');
  });

  it('a refresh token already rotated → 400 invalid_grant', async () => {
    const { tokens } = await issueTokens(auth.rpc, http);
    expectTokenResponse(await http.refresh(A, tokens.refresh_token));
    expectOAuthError(await http.refresh(A, tokens.refresh_token), 400, 'invalid_grant');
  });

  it('a raced refresh: of two concurrent refreshes with one token, the loser → 400 invalid_grant', async () => {
    const { tokens } = await issueTokens(auth.rpc, http);
    const answers = await Promise.all([
      http.refresh(A, tokens.refresh_token),
      http.refresh(A, tokens.refresh_token),
    ]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400]);
    expectOAuthError(
      answers.find((r) => r.status !== 200)!,
      400,
      'invalid_grant',
    );
  });
});

describe('unsupported_grant_type (RFC 6749 §5.2)', () => {
  it.each([
    'client_credentials',
    'password',
    'implicit',
    'urn:ietf:params:oauth:grant-type:device_code',
    'urn:ietf:params:oauth:grant-type:jwt-bearer',
    'AUTHORIZATION_CODE',
  ])('grant_type=%s with valid client credentials → 400 unsupported_grant_type', async (grantType) => {
    const res = await http.token({
      grant_type: grantType,
      client_id: A.client_id,
      client_secret: A.client_secret,
      username: 'alex.morgan@sandbox.test',
      password: 'sandbox-password',
      scope: 'profile:read',
    });
    expectOAuthError(res, 400, 'unsupported_grant_type');
  });
});

describe('invalid_scope (RFC 6749 §5.2, §6)', () => {
  it('a refresh asking for a scope wider than granted → 400 invalid_scope, and the refresh token survives', async () => {
    const { tokens } = await issueTokens(auth.rpc, http, { scope: 'profile:read' });
    expectOAuthError(
      await http.refresh(A, tokens.refresh_token, 'profile:read seatime:read'),
      400,
      'invalid_scope',
    );
    const next = expectTokenResponse(await http.refresh(A, tokens.refresh_token));
    expect(scopeSet(next.scope)).toEqual(['profile:read']);
  });

  it('a refresh asking for a scope that does not exist → 400 invalid_scope', async () => {
    const { tokens } = await issueTokens(auth.rpc, http);
    expectOAuthError(await http.refresh(A, tokens.refresh_token, 'profile:read admin'), 400, 'invalid_scope');
  });

  it('a refresh asking for a scope with quotes and non-ASCII letters → invalid_scope with an RFC 6749 §5.2 error_description', async () => {
    const { tokens } = await issueTokens(auth.rpc, http);
    // expectOAuthError checks the error_description character set.
    expectOAuthError(
      await http.refresh(A, tokens.refresh_token, 'profile:read "bösartig\\'),
      400,
      'invalid_scope',
    );
  });

  it('a refresh asking for a scope the partner was never allowed → 400 invalid_scope', async () => {
    const { tokens } = await issueTokens(auth.rpc, http, { partner: B, scope: 'profile:read' });
    expectOAuthError(await http.refresh(B, tokens.refresh_token, 'vessels:read'), 400, 'invalid_scope');
  });
});

describe('oauth_token_requests_total on the metrics port', () => {
  const count = async (labels: Record<string, string>) =>
    sample(await scrape(auth.app), 'oauth_token_requests_total', { app: 'auth-server', ...labels }) ?? 0;

  it('has every grant type’s issued series from the first scrape', async () => {
    const text = await scrape(auth.app);
    for (const grant of ['authorization_code', 'refresh_token'])
      expect(sample(text, 'oauth_token_requests_total', { grant_type: grant, outcome: 'issued' })).toEqual(
        expect.any(Number),
      );
  });

  it('counts tokens issued and each refusal by its RFC 6749 code, never by what the client sent', async () => {
    const issuedCode = { grant_type: 'authorization_code', outcome: 'issued' };
    const replayed = { grant_type: 'authorization_code', outcome: 'invalid_grant' };
    const badClient = { grant_type: 'authorization_code', outcome: 'invalid_client' };
    const refreshed = { grant_type: 'refresh_token', outcome: 'issued' };
    const unsupported = { grant_type: 'other', outcome: 'unsupported_grant_type' };
    const before = {
      issuedCode: await count(issuedCode),
      replayed: await count(replayed),
      badClient: await count(badClient),
      refreshed: await count(refreshed),
      unsupported: await count(unsupported),
    };

    const issued = await issueCode(auth.rpc);
    const tokens = expectTokenResponse(
      await http.exchange(A, issued.code, issued.verifier, issued.redirectUri),
    );
    // Refreshed before the replay below, which revokes what the code issued.
    expectTokenResponse(await http.refresh(A, tokens.refresh_token));
    expectOAuthError(
      await http.exchange(A, issued.code, issued.verifier, issued.redirectUri),
      400,
      'invalid_grant',
    );
    const other = await issueCode(auth.rpc);
    expectOAuthError(
      await http.token({
        grant_type: 'authorization_code',
        code: other.code,
        redirect_uri: other.redirectUri,
        code_verifier: other.verifier,
        client_id: A.client_id,
        client_secret: 'nope',
      }),
      401,
      'invalid_client',
    );
    expectOAuthError(
      await http.token({
        grant_type: 'urn:x:raw-grant',
        client_id: A.client_id,
        client_secret: A.client_secret,
      }),
      400,
      'unsupported_grant_type',
    );

    expect(await count(issuedCode)).toBe(before.issuedCode + 1);
    expect(await count(replayed)).toBe(before.replayed + 1);
    expect(await count(badClient)).toBe(before.badClient + 1);
    expect(await count(refreshed)).toBe(before.refreshed + 1);
    expect(await count(unsupported)).toBe(before.unsupported + 1);
    const text = await scrape(auth.app);
    expect(text).not.toContain('urn:x:raw-grant');
    expect(text.split('\n').filter((l) => l.startsWith('oauth_token_requests_total'))).not.toEqual(
      expect.arrayContaining([expect.stringContaining(A.client_id)]),
    );
  });
});

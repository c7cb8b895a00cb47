import { SCOPE_DESCRIPTIONS, type AuthorizeOutcome, type Scope } from '@svc/contracts';
import { authorizeRequest, member, partner, pkcePair } from '../support/factories';
import { useAuthServer } from '../support/starters/auth-server';
import { decide, validate } from '../support/oauth/flow';

/**
 * The authorization request (RFC 6749 §4.1.1, §4.1.2.1; RFC 7636 §4.3, §4.4.1; RFC 9207) as
 * auth-server judges it for consent-ui: `auth.authorize.validate` and `auth.authorize.decide`.
 * Unknown client or redirect URI: an error page, never a redirect (RFC 6749 §3.1.2.4, §4.1.2.1).
 * Every other error: a redirect to the registered URI with error, error_description, state, iss.
 */
jest.setTimeout(30_000);

const { auth } = useAuthServer();
const A = partner('sandbox-partner');
const B = partner('sandbox-partner-b');
const alex = member('alex.morgan@sandbox.test');

function expectErrorPage(outcome: AuthorizeOutcome, codes: readonly string[] = ['invalid_request']) {
  expect(outcome.outcome).toBe('error_page');
  if (outcome.outcome !== 'error_page') return;
  expect(codes).toContain(outcome.error);
  expect(outcome.error_description.length).toBeGreaterThan(0);
}

/** An error redirect to `redirectUri`: error, error_description, the state unchanged, iss; no code. */
function expectErrorRedirect(
  outcome: AuthorizeOutcome,
  redirectUri: string,
  codes: readonly string[],
  state: string | undefined,
): URLSearchParams {
  expect(outcome.outcome).toBe('redirect');
  if (outcome.outcome !== 'redirect') throw new Error(JSON.stringify(outcome));
  const to = new URL(outcome.redirect_to);
  expect(`${to.origin}${to.pathname}`).toBe(redirectUri);
  const q = to.searchParams;
  expect(codes).toContain(q.get('error'));
  expect(q.get('error_description')).toEqual(expect.any(String));
  expect(q.get('error_description')!.length).toBeGreaterThan(0);
  // RFC 6749 §4.1.2.1: error_description is limited to %x20-21 / %x23-5B / %x5D-7E.
  expect(q.get('error_description')).toMatch(/^[\x20-\x21\x23-\x5B\x5D-\x7E]+$/);
  expect(q.get('state')).toBe(state ?? null);
  expect(q.get('iss')).toBe(auth.issuer);
  expect(q.has('code')).toBe(false);
  return q;
}

describe('a valid request', () => {
  it('shows the consent screen with the partner’s name and each scope in plain words', async () => {
    const req = authorizeRequest({ scope: 'seatime:read profile:read' });
    const outcome = await validate(auth.rpc, req.params);
    expect(outcome.outcome).toBe('consent');
    if (outcome.outcome !== 'consent') return;
    expect(outcome.client_name).toBe('Sandbox Partner');
    expect([...outcome.scopes].sort((a, b) => a.scope.localeCompare(b.scope))).toEqual(
      (['profile:read', 'seatime:read'] as Scope[]).map((scope) => ({
        scope,
        description: SCOPE_DESCRIPTIONS[scope],
      })),
    );
    expect(outcome.params.state).toBe(req.state);
    expect(outcome.params.code_challenge).toBe(req.pkce.challenge);
  });

  it('accepts every registered redirect URI, https included', async () => {
    for (const redirectUri of A.redirect_uris) {
      const outcome = await validate(auth.rpc, authorizeRequest({ redirectUri }).params);
      expect(outcome.outcome).toBe('consent');
    }
  });

  it('Allow → redirect to the redirect_uri with code, the state unchanged and iss (RFC 9207 §2)', async () => {
    const state = 'st/ä t&e=1?#';
    const req = authorizeRequest({ state });
    const shown = await validate(auth.rpc, req.params);
    if (shown.outcome !== 'consent') throw new Error(JSON.stringify(shown));
    const outcome = await decide(auth.rpc, alex.user_id, shown.params, 'allow');
    expect(outcome.outcome).toBe('redirect');
    if (outcome.outcome !== 'redirect') return;
    const to = new URL(outcome.redirect_to);
    expect(`${to.origin}${to.pathname}`).toBe(req.redirectUri);
    expect(to.searchParams.get('code')).toMatch(/^[A-Za-z0-9._~-]{20,}$/);
    expect(to.searchParams.get('state')).toBe(state);
    expect(to.searchParams.get('iss')).toBe(auth.issuer);
    expect(to.searchParams.has('error')).toBe(false);
  });

  it('issues a different code on every Allow', async () => {
    const codes = new Set<string>();
    for (let i = 0; i < 3; i += 1) {
      const req = authorizeRequest();
      const outcome = await decide(auth.rpc, alex.user_id, req.params, 'allow');
      if (outcome.outcome !== 'redirect') throw new Error(JSON.stringify(outcome));
      codes.add(new URL(outcome.redirect_to).searchParams.get('code') ?? '');
    }
    expect(codes.size).toBe(3);
  });
});

describe('access_denied (RFC 6749 §4.1.2.1)', () => {
  it('Deny → redirect with error=access_denied, error_description, the state and iss, and no code', async () => {
    const req = authorizeRequest();
    const outcome = await decide(auth.rpc, alex.user_id, req.params, 'deny');
    expectErrorRedirect(outcome, req.redirectUri, ['access_denied'], req.state);
  });
});

describe('unknown client or redirect URI → error page, never a redirect (RFC 6749 §4.1.2.1)', () => {
  it.each([
    ['an unknown client_id', { client_id: 'no-such-client' }],
    ['no client_id', { client_id: undefined }],
    ['an empty client_id', { client_id: '' }],
    ['a client_id holding a NUL', { client_id: 'sandbox-partner\u0000' }],
    ['a redirect_uri holding a NUL', { redirect_uri: 'http://localhost:8765/callback\u0000' }],
    ['no redirect_uri', { redirect_uri: undefined }],
    ['an unregistered redirect_uri', { redirect_uri: 'https://attacker.example/callback' }],
    ['a registered redirect_uri plus a trailing slash', { redirect_uri: 'http://localhost:8765/callback/' }],
    ['a registered redirect_uri plus a query', { redirect_uri: 'http://localhost:8765/callback?x=1' }],
    ['a registered redirect_uri plus a fragment', { redirect_uri: 'http://localhost:8765/callback#x' }],
    ['a registered redirect_uri on another port', { redirect_uri: 'http://localhost:8766/callback' }],
    ['a registered redirect_uri in other case', { redirect_uri: 'http://localhost:8765/Callback' }],
    [
      'a registered https redirect_uri downgraded to http',
      { redirect_uri: 'http://partner.example/callback' },
    ],
    ['a prefix of a registered redirect_uri', { redirect_uri: 'http://localhost:8765/' }],
    ['another partner’s redirect_uri', { redirect_uri: B.redirect_uris[0] }],
  ] as const)('%s', async (_what, overrides) => {
    const req = authorizeRequest({ overrides: { ...overrides } });
    const errors = ['invalid_request', 'invalid_client', 'unauthorized_client'];
    expectErrorPage(await validate(auth.rpc, req.params), errors);
    // Deciding on such parameters never yields a code either.
    const decided = await decide(auth.rpc, alex.user_id, req.params, 'allow');
    expectErrorPage(decided, errors);
  });

  it('a repeated client_id → error page invalid_request (RFC 6749 §3.1)', async () => {
    const req = authorizeRequest();
    expectErrorPage(await validate(auth.rpc, req.params, ['client_id']), ['invalid_request']);
  });

  it('a repeated redirect_uri → error page invalid_request (RFC 6749 §3.1)', async () => {
    const req = authorizeRequest();
    expectErrorPage(await validate(auth.rpc, req.params, ['redirect_uri']), ['invalid_request']);
  });
});

describe('other errors → redirect with error, error_description, state and iss', () => {
  it.each([
    ['response_type=token', { response_type: 'token' }, ['unsupported_response_type']],
    ['response_type=code id_token', { response_type: 'code id_token' }, ['unsupported_response_type']],
    ['no response_type', { response_type: undefined }, ['invalid_request']],
    [
      'code_challenge_method=plain (RFC 7636 §4.4.1)',
      { code_challenge_method: 'plain' },
      ['invalid_request'],
    ],
    ['code_challenge_method=s256 (wrong case)', { code_challenge_method: 's256' }, ['invalid_request']],
    ['no code_challenge_method', { code_challenge_method: undefined }, ['invalid_request']],
    ['no code_challenge (RFC 7636 §4.4.1)', { code_challenge: undefined }, ['invalid_request']],
    ['an empty code_challenge', { code_challenge: '' }, ['invalid_request']],
    [
      'a code_challenge that is no S256 value (42 chars)',
      { code_challenge: 'a'.repeat(42) },
      ['invalid_request'],
    ],
    ['a code_challenge with padding', { code_challenge: `${pkcePair().challenge}=` }, ['invalid_request']],
    [
      'a scope the partner was never allowed',
      { client_id: B.client_id, redirect_uri: B.redirect_uris[0], scope: 'profile:read seatime:read' },
      ['invalid_scope'],
    ],
    ['a scope that does not exist', { scope: 'profile:read admin' }, ['invalid_scope']],
    // The interface makes scope required (invalid_request); RFC 6749 §3.3 lets a server without a
    // default answer invalid_scope. Either is right; a consent screen or a code is not.
    ['no scope', { scope: undefined }, ['invalid_request', 'invalid_scope']],
    ['an empty scope', { scope: '' }, ['invalid_request', 'invalid_scope']],
  ] as const)('%s', async (_what, overrides, codes) => {
    const req = authorizeRequest({ overrides: { ...overrides } });
    const redirectUri = req.params.redirect_uri;
    expectErrorRedirect(await validate(auth.rpc, req.params), redirectUri, codes, req.state);
  });

  it('no state → redirect with error invalid_request and no state', async () => {
    const req = authorizeRequest({ overrides: { state: undefined } });
    expectErrorRedirect(
      await validate(auth.rpc, req.params),
      req.redirectUri,
      ['invalid_request'],
      undefined,
    );
  });

  it.each(['scope', 'state', 'code_challenge', 'response_type', 'code_challenge_method'])(
    'a repeated %s → redirect with error invalid_request (RFC 6749 §3.1)',
    async (name) => {
      const req = authorizeRequest();
      const outcome = await validate(auth.rpc, req.params, [name]);
      expect(outcome.outcome).toBe('redirect');
      if (outcome.outcome !== 'redirect') return;
      const q = new URL(outcome.redirect_to).searchParams;
      expect(q.get('error')).toBe('invalid_request');
      expect(q.get('iss')).toBe(auth.issuer);
      expect(q.has('code')).toBe(false);
    },
  );
});

describe('error descriptions never echo what the request sent', () => {
  it('an unknown scope with quotes, a backslash and non-ASCII letters → error_description within RFC 6749 §4.1.2.1', async () => {
    const req = authorizeRequest({ scope: 'profile:read "bösartig\\<script>' });
    expectErrorRedirect(await validate(auth.rpc, req.params), req.redirectUri, ['invalid_scope'], req.state);
  });

  it('a 20 000-character unknown scope → an error redirect that still fits the auth.authorize.validate contract', async () => {
    const req = authorizeRequest({ scope: `profile:read ${'x'.repeat(20_000)}` });
    // The RPC client parses the answer with the contract (redirect_to at most 16 384 characters).
    const outcome = await validate(auth.rpc, req.params);
    expectErrorRedirect(outcome, req.redirectUri, ['invalid_scope'], req.state);
  });
});

describe('auth.authorize.decide re-checks what it is given (consent-ui passes parameters through)', () => {
  it('a scope widened after the consent screen → no code', async () => {
    const req = authorizeRequest({ partner: B, scope: 'profile:read' });
    const shown = await validate(auth.rpc, req.params);
    if (shown.outcome !== 'consent') throw new Error(JSON.stringify(shown));
    const outcome = await decide(
      auth.rpc,
      alex.user_id,
      { ...shown.params, scope: 'profile:read vessels:read' },
      'allow',
    );
    expectErrorRedirect(outcome, req.redirectUri, ['invalid_scope'], req.state);
  });

  it('plain PKCE slipped into the decision → no code', async () => {
    const req = authorizeRequest({ overrides: { code_challenge_method: 'plain' } });
    const outcome = await decide(auth.rpc, alex.user_id, req.params, 'allow');
    expectErrorRedirect(outcome, req.redirectUri, ['invalid_request'], req.state);
  });
});

import fc from 'fast-check';
import type { AuthorizeOutcome } from '@svc/contracts';
import { basicAuthorization, codeVerifier, partner, pkcePair, unknownToken } from '../support/factories';
import { request, type HttpResponse } from '../support/http';
import { startAuthServer, type AuthServerHarness } from '../support/starters/auth-server';
import { startConsentUi, type ConsentUiHarness } from '../support/starters/consent-ui';
import type { FormClient } from '../support/oauth/forms';
import { validate } from '../support/oauth/flow';

/**
 * Property-based: random and malformed requests to POST /oauth/token, POST /oauth/revoke,
 * auth.authorize.validate and GET /oauth/authorize. Never a 500; always the right shape:
 * RFC 6749 §5.2 JSON with a known code and its status at the token endpoint, a valid outcome
 * (and the right kind of outcome when the oracle can tell) at the authorization endpoint.
 * Runs are bounded so the file stays well under 30 s.
 */
jest.setTimeout(60_000);

const A = partner('sandbox-partner');
const B = partner('sandbox-partner-b');
const TOKEN_ERRORS = [
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unsupported_grant_type',
  'invalid_scope',
];

let auth: AuthServerHarness;
let ui: ConsentUiHarness;
let signedIn: FormClient;

beforeAll(async () => {
  auth = await startAuthServer();
  ui = await startConsentUi(auth);
  signedIn = await ui.signIn('jo.kim@sandbox.test');
}, 60_000);

afterAll(async () => {
  await ui?.close();
  await auth?.close();
});

// ---- values ---------------------------------------------------------------------------------

const hugeString = fc.integer({ min: 5_000, max: 200_000 }).map((n) => 'x'.repeat(n));
const weirdString = fc.oneof(
  fc.constant(''),
  fc.constant(' '),
  fc.constant('\u0000'),
  fc.constant('%ZZ'),
  fc.constant('a=b&c'),
  fc.constant('null'),
  fc.constant('[]'),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  hugeString,
);
const tokenValue = fc.oneof(
  fc.constantFrom(
    'authorization_code',
    'refresh_token',
    'client_credentials',
    'password',
    A.client_id,
    A.client_secret,
    B.client_id,
    A.redirect_uris[0],
    'profile:read',
    'profile:read admin',
  ),
  fc.constant(null).map(() => codeVerifier(43)),
  fc.constant(null).map(() => unknownToken()),
  weirdString,
);
const tokenParamName = fc.oneof(
  fc.constantFrom(
    'grant_type',
    'code',
    'redirect_uri',
    'code_verifier',
    'client_id',
    'client_secret',
    'refresh_token',
    'scope',
    'token',
    'token_type_hint',
  ),
  fc.string({ maxLength: 12 }),
);
const pairs = fc.array(fc.tuple(tokenParamName, tokenValue), { maxLength: 10 });

type Body =
  | { kind: 'form'; pairs: [string, string][] }
  | { kind: 'raw-form'; raw: string }
  | { kind: 'json'; value: unknown }
  | { kind: 'no-content-type'; pairs: [string, string][] }
  | { kind: 'text'; raw: string }
  | { kind: 'empty' };

const body: fc.Arbitrary<Body> = fc.oneof(
  { weight: 5, arbitrary: pairs.map((p) => ({ kind: 'form' as const, pairs: p })) },
  {
    weight: 2,
    arbitrary: fc
      .array(
        fc.constantFrom('=', '&', '%', '%2', '%ZZ', '+', 'grant_type', 'code', 'é', '\u0000', '==', 'a'),
        {
          maxLength: 30,
        },
      )
      .map((parts) => ({ kind: 'raw-form' as const, raw: parts.join('') })),
  },
  {
    weight: 2,
    arbitrary: fc
      .oneof(
        fc.dictionary(tokenParamName, fc.oneof(fc.jsonValue({ maxDepth: 2 }), tokenValue), { maxKeys: 6 }),
        fc.jsonValue({ maxDepth: 2 }),
      )
      .map((value) => ({ kind: 'json' as const, value })),
  },
  { weight: 1, arbitrary: pairs.map((p) => ({ kind: 'no-content-type' as const, pairs: p })) },
  { weight: 1, arbitrary: fc.string({ maxLength: 60 }).map((raw) => ({ kind: 'text' as const, raw })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'empty' as const }) },
);

const authorization = fc.option(
  fc.oneof(
    fc.constant(basicAuthorization(A.client_id, A.client_secret)),
    fc.constant(basicAuthorization(A.client_id, 'wrong')),
    fc.constant(basicAuthorization('no-such-client', 'x')),
    fc.constant('Basic !!!'),
    fc.constant('Basic '),
    fc.constant(`Bearer ${unknownToken()}`),
    fc
      .string({ unit: fc.constantFrom(...'abcXYZ019+/= :'.split('')), maxLength: 40 })
      .map((s) => `Basic ${s}`),
  ),
  { nil: undefined },
);

function encode(b: Body): { headers: Record<string, string>; payload?: string } {
  const form = (p: [string, string][]) => {
    const params = new URLSearchParams();
    for (const [k, v] of p) params.append(k, v);
    return params.toString();
  };
  switch (b.kind) {
    case 'form':
      return { headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form(b.pairs) };
    case 'raw-form':
      return { headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: b.raw };
    case 'json':
      return { headers: { 'content-type': 'application/json' }, payload: JSON.stringify(b.value) ?? 'null' };
    case 'no-content-type':
      return { headers: {}, payload: form(b.pairs) };
    case 'text':
      return { headers: { 'content-type': 'text/plain' }, payload: b.raw };
    case 'empty':
      return { headers: {} };
  }
}

function summarize(res: HttpResponse): string {
  return `${res.status} ${res.header('content-type') ?? ''} ${res.text.slice(0, 300)}`;
}

/** RFC 6749 §5.2: a known code, 401 exactly for invalid_client, 400 otherwise; JSON; no Problem. */
function checkOAuthError(res: HttpResponse, usedBasic: boolean): void {
  const what = summarize(res);
  if (res.status >= 500) throw new Error(`server error: ${what}`);
  if (![400, 401].includes(res.status)) throw new Error(`status ${res.status} is not 400/401: ${what}`);
  if (!/^application\/json/.test(res.header('content-type') ?? '')) throw new Error(`not JSON: ${what}`);
  const parsed = JSON.parse(res.text) as Record<string, unknown>;
  if (typeof parsed.error !== 'string' || !TOKEN_ERRORS.includes(parsed.error)) {
    throw new Error(`unknown error code: ${what}`);
  }
  if (parsed.error_description !== undefined && typeof parsed.error_description !== 'string') {
    throw new Error(`error_description is not a string: ${what}`);
  }
  if (!/^[\x20-\x21\x23-\x5B\x5D-\x7E]*$/.test((parsed.error_description as string | undefined) ?? '')) {
    throw new Error(`error_description outside RFC 6749 §5.2: ${what}`);
  }
  if ('type' in parsed || 'instance' in parsed) throw new Error(`a Problem Details body: ${what}`);
  if ((res.status === 401) !== (parsed.error === 'invalid_client')) {
    throw new Error(`invalid_client must be exactly the 401s: ${what}`);
  }
  if (res.status === 401 && usedBasic && !/^Basic\b/i.test(res.header('www-authenticate') ?? '')) {
    throw new Error(`401 after Basic without WWW-Authenticate: Basic: ${what}`);
  }
}

describe('POST /oauth/token with random and malformed requests', () => {
  it('never answers 500, always RFC 6749 §5.2 errors with the right status', async () => {
    await fc.assert(
      fc.asyncProperty(body, authorization, async (b, authz) => {
        const { headers, payload } = encode(b);
        const res = await request(`${auth.url}/oauth/token`, {
          method: 'POST',
          headers: authz ? { ...headers, authorization: authz } : headers,
          body: payload,
        });
        checkOAuthError(res, authz?.startsWith('Basic') ?? false);
      }),
      { numRuns: 150, interruptAfterTimeLimit: 20_000 },
    );
  });
});

describe('POST /oauth/revoke with random and malformed requests', () => {
  it('never answers 500: 200 with an empty body, or an RFC 6749 §5.2 error', async () => {
    await fc.assert(
      fc.asyncProperty(body, authorization, async (b, authz) => {
        const { headers, payload } = encode(b);
        const res = await request(`${auth.url}/oauth/revoke`, {
          method: 'POST',
          headers: authz ? { ...headers, authorization: authz } : headers,
          body: payload,
        });
        if (res.status === 200) {
          if (res.text !== '') throw new Error(`200 with a body: ${summarize(res)}`);
          return;
        }
        checkOAuthError(res, authz?.startsWith('Basic') ?? false);
      }),
      { numRuns: 60, interruptAfterTimeLimit: 10_000 },
    );
  });
});

// ---- the authorization endpoint --------------------------------------------------------------

type Expect = 'consent' | 'error_page' | 'redirect_error' | 'any';

interface AuthorizeCase {
  params: Record<string, string>;
  repeated: string[];
  expected: Expect;
}

const AUTHORIZE_PARAMS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
] as const;

/** A value of one parameter, tagged valid / invalid / unknown (the oracle cannot tell). */
type Tagged = { value: string | undefined; verdict: 'valid' | 'invalid' | 'unknown' };
const valid = (value: string): Tagged => ({ value, verdict: 'valid' });
const invalid = (value: string | undefined): Tagged => ({ value, verdict: 'invalid' });
const unknown = (value: string): Tagged => ({ value, verdict: 'unknown' });

const authorizeCase: fc.Arbitrary<AuthorizeCase> = fc
  .record({
    client: fc.constantFrom(A, B, null),
    redirectChoice: fc.constantFrom('registered', 'trailing-slash', 'other', 'missing', 'random'),
    response_type: fc.oneof(
      { weight: 4, arbitrary: fc.constant(valid('code')) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(invalid('token'), invalid(''), invalid(undefined), invalid('CODE')),
      },
    ),
    scope: fc.oneof(
      {
        weight: 4,
        arbitrary: fc
          .constantFrom('profile:read', 'all')
          .map((s) => ({ value: s, verdict: 'valid' as const })),
      },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          invalid('admin'),
          invalid('profile:read admin'),
          invalid(''),
          invalid(undefined),
        ),
      },
      { weight: 1, arbitrary: weirdString.map(unknown) },
    ),
    state: fc.oneof(
      {
        weight: 4,
        arbitrary: fc
          .string({ unit: fc.constantFrom(...'abcXYZ0189-._~'.split('')), minLength: 1, maxLength: 40 })
          .map(valid),
      },
      { weight: 1, arbitrary: fc.constant(invalid(undefined)) },
      { weight: 1, arbitrary: weirdString.filter((s) => s !== '').map(unknown) },
    ),
    code_challenge: fc.oneof(
      { weight: 4, arbitrary: fc.constant(null).map(() => valid(pkcePair().challenge)) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          invalid(undefined),
          invalid(''),
          invalid('short'),
          invalid('='.repeat(43)),
        ),
      },
      { weight: 1, arbitrary: weirdString.filter((s) => !/^[A-Za-z0-9_-]{43}$/.test(s)).map(invalid) },
    ),
    code_challenge_method: fc.oneof(
      { weight: 4, arbitrary: fc.constant(valid('S256')) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(invalid('plain'), invalid('s256'), invalid(''), invalid(undefined)),
      },
    ),
    extra: fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }), weirdString, { maxKeys: 3 }),
    repeated: fc.subarray([...AUTHORIZE_PARAMS], { maxLength: 2 }),
    randomRedirect: weirdString,
  })
  .map((r) => {
    const p = r.client;
    let redirect: Tagged;
    switch (r.redirectChoice) {
      case 'registered':
        redirect = p ? valid(p.redirect_uris[0]) : unknown(A.redirect_uris[0]);
        break;
      case 'trailing-slash':
        redirect = invalid(`${(p ?? A).redirect_uris[0]}/`);
        break;
      case 'other':
        redirect = invalid('https://attacker.example/callback');
        break;
      case 'missing':
        redirect = invalid(undefined);
        break;
      case 'random':
        redirect = invalid(r.randomRedirect);
        break;
    }
    const scope: Tagged =
      r.scope.value === 'all' && r.scope.verdict === 'valid' ? valid((p ?? A).scopes.join(' ')) : r.scope;
    const tagged: Record<string, Tagged> = {
      response_type: r.response_type,
      client_id: p ? valid(p.client_id) : invalid('no-such-client'),
      redirect_uri: redirect,
      scope,
      state: r.state,
      code_challenge: r.code_challenge,
      code_challenge_method: r.code_challenge_method,
    };
    const params: Record<string, string> = {};
    for (const [k, v] of Object.entries(r.extra))
      if (!(AUTHORIZE_PARAMS as readonly string[]).includes(k)) params[k] = v;
    for (const [k, t] of Object.entries(tagged)) if (t.value !== undefined) params[k] = t.value;
    const repeated = r.repeated.filter((name) => params[name] !== undefined);

    // Oracle (docs/rules.md, OAuth endpoints; docs/rules.md, OAuth): client and redirect URI first,
    // since an error may only be redirected to a URI known to belong to the client.
    let expected: Expect;
    const clientOk = tagged.client_id.verdict === 'valid' && tagged.redirect_uri.verdict === 'valid';
    const clientRepeated = repeated.includes('client_id') || repeated.includes('redirect_uri');
    // A state too long to send back unchanged gets an error page rather than a redirect; senders may
    // truncate values (asSent), so its exact outcome is pinned by the service's unit test instead.
    const stateTooLong = (params.state?.length ?? 0) > 1000;
    if (!clientOk || clientRepeated) expected = 'error_page';
    else if (stateTooLong) expected = 'any';
    else if (repeated.length > 0 || Object.values(tagged).some((t) => t.verdict === 'invalid'))
      expected = 'redirect_error';
    else if (Object.values(tagged).some((t) => t.verdict === 'unknown')) expected = 'any';
    else expected = 'consent';
    return { params, repeated, expected };
  });

function checkOutcome(c: AuthorizeCase, outcome: AuthorizeOutcome): void {
  const what = `${JSON.stringify({ ...c, params: Object.fromEntries(Object.entries(c.params).map(([k, v]) => [k, v.slice(0, 80)])) })} → ${JSON.stringify(outcome).slice(0, 400)}`;
  if (outcome.outcome === 'redirect') {
    const to = new URL(outcome.redirect_to);
    const registered = [A, B].find((p) => p.client_id === c.params.client_id)?.redirect_uris ?? [];
    if (
      `${to.origin}${to.pathname}` !== c.params.redirect_uri ||
      !registered.includes(c.params.redirect_uri)
    ) {
      throw new Error(`redirect to an unregistered URI: ${what}`);
    }
    if (to.searchParams.has('code')) throw new Error(`validate issued a code: ${what}`);
    if (!to.searchParams.get('error')) throw new Error(`redirect without error: ${what}`);
    if (!/^[\x20-\x21\x23-\x5B\x5D-\x7E]*$/.test(to.searchParams.get('error_description') ?? '')) {
      throw new Error(`error_description outside RFC 6749 §4.1.2.1: ${what}`);
    }
    if (to.searchParams.get('iss') !== auth.issuer) throw new Error(`redirect without iss: ${what}`);
    if (
      c.params.state !== undefined &&
      !c.repeated.includes('state') &&
      to.searchParams.get('state') !== c.params.state
    ) {
      throw new Error(`state not returned unchanged: ${what}`);
    }
  }
  switch (c.expected) {
    case 'consent':
      if (outcome.outcome !== 'consent') throw new Error(`expected the consent screen: ${what}`);
      return;
    case 'error_page':
      if (outcome.outcome !== 'error_page') throw new Error(`expected an error page: ${what}`);
      return;
    case 'redirect_error':
      if (outcome.outcome !== 'redirect') throw new Error(`expected an error redirect: ${what}`);
      return;
    case 'any':
      return;
  }
}

describe('auth.authorize.validate with random and malformed parameters', () => {
  it('always answers a valid outcome, the right kind where the oracle can tell, never a code', async () => {
    await fc.assert(
      fc.asyncProperty(authorizeCase, async (c) => {
        const outcome = await validate(auth.rpc, c.params, c.repeated);
        checkOutcome(c, outcome);
      }),
      { numRuns: 200, interruptAfterTimeLimit: 15_000 },
    );
  });
});

function authorizeParamsWith(overrides: Record<string, string>): Record<string, string> {
  return {
    response_type: 'code',
    client_id: A.client_id,
    redirect_uri: A.redirect_uris[0],
    scope: 'profile:read',
    state: 'fuzz-state',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    ...overrides,
  };
}

/**
 * The case as sent in a URL: values cut to 1 000 characters, so the request line stays within what
 * the gateway passes on (nginx's 8 KiB header buffers) and under Node's 16 KiB header limit.
 */
function asSent(c: AuthorizeCase): { sent: AuthorizeCase; query: string } {
  const params = Object.fromEntries(Object.entries(c.params).map(([k, v]) => [k, v.slice(0, 1000)]));
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    q.append(k, v);
    if (c.repeated.includes(k)) q.append(k, v.slice(0, 100));
  }
  return { sent: { ...c, params }, query: q.toString() };
}

describe('GET /oauth/authorize (consent-ui) with random and malformed parameters', () => {
  it('signed in: consent page (200), error page (400) or an error redirect to a registered URI; never 500', async () => {
    await fc.assert(
      fc.asyncProperty(authorizeCase, async (generated) => {
        const { sent: c, query } = asSent(generated);
        const res = await signedIn.fetch(`/oauth/authorize?${query}`);
        const text = await res.text();
        const what = `${res.status} ${res.headers.get('location') ?? ''} ${text.slice(0, 200)}`;
        if (res.status >= 500) throw new Error(`server error: ${what}`);
        if (res.status === 200) {
          if (!text.includes('Allow') || !text.includes('Deny'))
            throw new Error(`200 without Allow/Deny: ${what}`);
          checkOutcome(c, { outcome: 'consent', client_name: '', scopes: [], params: {} });
        } else if (res.status === 400) {
          if (!/^text\/html/.test(res.headers.get('content-type') ?? ''))
            throw new Error(`400 not a page: ${what}`);
          if (c.expected === 'consent') throw new Error(`valid request refused: ${what}`);
        } else if (res.status === 302 || res.status === 303) {
          checkOutcome(c, { outcome: 'redirect', redirect_to: res.headers.get('location') ?? '' });
        } else {
          throw new Error(`unexpected status: ${what}`);
        }
      }),
      { numRuns: 80, interruptAfterTimeLimit: 10_000 },
    );
  });

  it('signed in, a 12 000-character unknown scope: an error redirect, not a server error', async () => {
    const c: AuthorizeCase = {
      params: authorizeParamsWith({ scope: `profile:read ${'x'.repeat(12_000)}` }),
      repeated: [],
      expected: 'redirect_error',
    };
    const res = await signedIn.fetch(`/oauth/authorize?${new URLSearchParams(c.params).toString()}`);
    expect(res.status).toBeLessThan(500);
    expect([302, 303]).toContain(res.status);
    checkOutcome(c, { outcome: 'redirect', redirect_to: res.headers.get('location') ?? '' });
  });

  it('not signed in: a redirect to /login (or an error page / error redirect); never 500', async () => {
    const anonymous = ui.client();
    await fc.assert(
      fc.asyncProperty(authorizeCase, async (generated) => {
        const { sent: c, query } = asSent(generated);
        const res = await anonymous.fetch(`/oauth/authorize?${query}`);
        const location = res.headers.get('location') ?? '';
        const what = `${res.status} ${location}`;
        if (res.status >= 500) throw new Error(`server error: ${what}`);
        if (res.status === 302 || res.status === 303) {
          const to = new URL(location, ui.url);
          if (to.pathname === '/login') {
            if (!to.searchParams.get('return_to')?.startsWith('/oauth/authorize'))
              throw new Error(`no return_to: ${what}`);
            return;
          }
          checkOutcome(c, { outcome: 'redirect', redirect_to: location });
        } else if (res.status !== 400) {
          throw new Error(`unexpected status: ${what}`);
        }
      }),
      { numRuns: 40, interruptAfterTimeLimit: 8_000 },
    );
  });
});

import {
  AUTH_AUTHORIZE_DECIDE,
  AUTH_AUTHORIZE_VALIDATE,
  type AuthorizeOutcome,
  type SandboxMember,
  type SandboxPartner,
} from '@svc/contracts';
import type { RpcClient } from '@svc/platform';
import {
  authorizeRequest,
  basicAuthorization,
  member as sandboxMember,
  partner as sandboxPartner,
  type TokenResponse,
} from '../factories';
import { request, type HttpResponse } from '../http';

/** What the flow asks through: the harness's CallerRpc, or an app's own RpcClient. */
type Rpc = Pick<RpcClient, 'call'>;

export interface FlowOptions {
  readonly partner?: SandboxPartner;
  readonly member?: SandboxMember;
  readonly scope?: string;
  readonly redirectUri?: string;
  /** Parameters of the authorization request to change (a value) or drop (undefined). */
  readonly overrides?: Record<string, string | undefined>;
}

export function validate(rpc: Rpc, params: Record<string, string>, repeated: string[] = []) {
  return rpc.call(AUTH_AUTHORIZE_VALIDATE, { params, repeated });
}

export function decide(
  rpc: Rpc,
  userId: string,
  params: Record<string, string>,
  decision: 'allow' | 'deny',
): Promise<AuthorizeOutcome> {
  return rpc.call(AUTH_AUTHORIZE_DECIDE, { user_id: userId, params, decision });
}

function describeOutcome(outcome: AuthorizeOutcome): string {
  return JSON.stringify(outcome).slice(0, 500);
}

/**
 * A code obtained the way consent-ui obtains one: `auth.authorize.validate` with the query, then
 * `auth.authorize.decide` with the validated parameters and the member's decision (allow).
 */
export async function issueCode(rpc: Rpc, options: FlowOptions = {}) {
  const p = options.partner ?? sandboxPartner();
  const m = options.member ?? sandboxMember();
  const req = authorizeRequest({
    partner: p,
    scope: options.scope,
    redirectUri: options.redirectUri,
    overrides: options.overrides,
  });
  const shown = await validate(rpc, req.params);
  if (shown.outcome !== 'consent')
    throw new Error(`expected the consent screen, got ${describeOutcome(shown)}`);
  const decided = await decide(rpc, m.user_id, shown.params, 'allow');
  if (decided.outcome !== 'redirect') throw new Error(`expected a redirect, got ${describeOutcome(decided)}`);
  const redirect = new URL(decided.redirect_to);
  const code = redirect.searchParams.get('code');
  if (!code) throw new Error(`no code in ${decided.redirect_to}`);
  return {
    code,
    verifier: req.pkce.verifier,
    redirectUri: req.redirectUri,
    state: req.state,
    partner: p,
    member: m,
    redirect,
  };
}

export type IssuedCode = Awaited<ReturnType<typeof issueCode>>;

/** A code of issueCode() exchanged at /oauth/token. */
export async function issueTokens(rpc: Rpc, http: OAuthHttp, options: FlowOptions = {}) {
  const issued = await issueCode(rpc, options);
  const res = await http.exchange(issued.partner, issued.code, issued.verifier, issued.redirectUri);
  return { ...issued, tokens: expectTokenResponse(res) };
}

export type IssuedTokens = Awaited<ReturnType<typeof issueTokens>>;

/**
 * An access token from the real auth-server, obtained as a partner obtains one: consent through
 * `auth.authorize.*` (as consent-ui asks), then the code exchanged at `/oauth/token` with PKCE.
 */
export async function accessToken(
  auth: { readonly rpc: Rpc; readonly url: string },
  member: SandboxMember,
  options: { readonly partner?: SandboxPartner; readonly scope?: string } = {},
): Promise<string> {
  const partner = options.partner ?? sandboxPartner();
  const { tokens } = await issueTokens(auth.rpc, new OAuthHttp(auth.url), {
    partner,
    member,
    scope: options.scope ?? partner.scopes.join(' '),
  });
  return tokens.access_token;
}

export type FormFields = Record<string, string> | readonly (readonly [string, string])[];
/** `basic`: the client's id and secret in the Authorization header (RFC 6749 §2.3.1). */
type FormOptions = { basic?: readonly [string, string]; headers?: Record<string, string> };

/**
 * A partner's HTTP side of OAuth, raw: every call returns the response as it came, so tests
 * assert on status, headers and body themselves.
 */
export class OAuthHttp {
  constructor(readonly baseUrl: string) {}

  /** POST a form to /oauth/token; `basic` sends the client's credentials in the header instead. */
  token(fields: FormFields, options: FormOptions = {}) {
    return this.postForm('/oauth/token', fields, options);
  }

  revoke(fields: FormFields, options: FormOptions = {}) {
    return this.postForm('/oauth/revoke', fields, options);
  }

  userinfo(accessToken: string): Promise<HttpResponse> {
    return request(`${this.baseUrl}/oauth/userinfo`, { bearer: accessToken });
  }

  postForm(path: string, form: FormFields, options: FormOptions = {}): Promise<HttpResponse> {
    const basic: Record<string, string> = options.basic
      ? { authorization: basicAuthorization(...options.basic) }
      : {};
    return request(`${this.baseUrl}${path}`, {
      method: 'POST',
      form,
      headers: { ...basic, ...options.headers },
    });
  }

  /** grant_type=authorization_code with client_secret_post. */
  exchange(
    p: SandboxPartner,
    code: string,
    verifier: string,
    redirectUri: string,
    extra: Record<string, string> = {},
  ): Promise<HttpResponse> {
    return this.token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      client_id: p.client_id,
      client_secret: p.client_secret,
      ...extra,
    });
  }

  /** grant_type=refresh_token with client_secret_post; `scope` only when given. */
  refresh(p: SandboxPartner, refreshToken: string, scope?: string): Promise<HttpResponse> {
    return this.token({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: p.client_id,
      client_secret: p.client_secret,
      ...(scope === undefined ? {} : { scope }),
    });
  }

  revokeToken(p: SandboxPartner, token: string, hint?: string): Promise<HttpResponse> {
    return this.revoke({
      token,
      client_id: p.client_id,
      client_secret: p.client_secret,
      ...(hint ? { token_type_hint: hint } : {}),
    });
  }
}

/** An RFC 6749 §5.2 error answer: the status, JSON `{error, error_description}`, no Problem Details. */
export function expectOAuthError(res: HttpResponse, status: number, code: string): Record<string, unknown> {
  const summary = `${res.status} ${res.text.slice(0, 300)}`;
  expect({ status: res.status, summary }).toEqual({ status, summary });
  expect(res.header('content-type')).toMatch(/^application\/json/);
  const body = res.json<Record<string, unknown>>();
  expect(body.error).toBe(code);
  expect(typeof body.error_description).toBe('string');
  // RFC 6749 §5.2: error_description is printable ASCII without '"' and '\'.
  expect(body.error_description).toMatch(/^[\x20-\x21\x23-\x5B\x5D-\x7E]*$/);
  // Not an RFC 7807 Problem (docs/rules.md, Errors).
  expect(body).not.toHaveProperty('type');
  expect(body).not.toHaveProperty('instance');
  return body;
}

/** The token response of docs/rules.md, with the caching headers of RFC 6749 §5.1. */
export function expectTokenResponse(res: HttpResponse): TokenResponse {
  const summary = `${res.status} ${res.text.slice(0, 300)}`;
  expect({ status: res.status, summary }).toEqual({ status: 200, summary });
  expect(res.header('content-type')).toMatch(/^application\/json/);
  expect(res.header('cache-control') ?? '').toMatch(/(^|,)\s*no-store\s*(,|$)/i);
  const pragma = res.header('pragma');
  if (pragma !== undefined) expect(pragma).toMatch(/no-cache/i);
  const body = res.json<TokenResponse>();
  expect(Object.keys(body).sort()).toEqual([
    'access_token',
    'expires_in',
    'refresh_token',
    'scope',
    'token_type',
  ]);
  expect(body.token_type).toBe('Bearer');
  expect(body.expires_in).toBe(3600);
  expect(typeof body.access_token).toBe('string');
  expect(typeof body.refresh_token).toBe('string');
  expect(body.access_token.length).toBeGreaterThanOrEqual(32);
  expect(body.refresh_token.length).toBeGreaterThanOrEqual(32);
  expect(body.access_token).not.toBe(body.refresh_token);
  expect(typeof body.scope).toBe('string');
  return body;
}

/** Space-separated scopes as a sorted list, for comparisons that ignore order (RFC 6749 §3.3). */
export function scopeSet(scope: string | undefined | null): string[] {
  return (scope ?? '').split(' ').filter(Boolean).sort();
}

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
  member as sandboxMember,
  partner as sandboxPartner,
  type TokenResponse,
} from '../factories';
import { expectTokenResponse, OAuthHttp } from './oauth-http';

/** What the flow asks through: the harness's CallerRpc, or an app's own RpcClient. */
type Rpc = Pick<RpcClient, 'call'>;

/**
 * Codes and tokens obtained the way consent-ui obtains them: `auth.authorize.validate` with the
 * query, then `auth.authorize.decide` with the validated parameters and the member's decision.
 */
export interface IssuedCode {
  readonly code: string;
  readonly verifier: string;
  readonly redirectUri: string;
  readonly state: string;
  readonly partner: SandboxPartner;
  readonly member: SandboxMember;
  readonly redirect: URL;
}

export interface IssuedTokens extends IssuedCode {
  readonly tokens: TokenResponse;
}

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

export async function issueCode(rpc: Rpc, options: FlowOptions = {}): Promise<IssuedCode> {
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

export async function issueTokens(
  rpc: Rpc,
  http: OAuthHttp,
  options: FlowOptions = {},
): Promise<IssuedTokens> {
  const issued = await issueCode(rpc, options);
  const res = await http.exchange(issued.partner, issued.code, issued.verifier, issued.redirectUri);
  return { ...issued, tokens: expectTokenResponse(res) };
}

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

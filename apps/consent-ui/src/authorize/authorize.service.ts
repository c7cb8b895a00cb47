import { Injectable } from '@nestjs/common';
import { AUTH_AUTHORIZE_DECIDE, AUTH_AUTHORIZE_VALIDATE, type AuthorizeOutcome } from '@svc/contracts';
import { assertUnreachable, RpcClient } from '@svc/platform';
import { loginLocation } from '../login/return-to';
import { SessionsService } from '../sessions/sessions.service';
import { parseAuthorizeQuery, type DecisionForm } from './authorize-request';
import { AuthorizeException } from './authorize.exception';

export type DecisionResult =
  | { readonly outcome: 'redirect'; readonly location: string }
  | { readonly outcome: 'error_page'; readonly error: string; readonly description: string };

/** What GET /oauth/authorize shows. */
export type AuthorizePage =
  | { readonly outcome: 'sign_in'; readonly location: string }
  | {
      readonly outcome: 'consent';
      readonly clientName: string;
      readonly scopes: readonly { readonly scope: string; readonly description: string }[];
      readonly params: Readonly<Record<string, string>>;
      readonly csrfToken: string;
    }
  | DecisionResult;

/**
 * The consent screen. auth-server owns every rule of the authorization request and builds every
 * redirect; this service makes sure a signed-in member decides, through a CSRF-protected form.
 */
@Injectable()
export class AuthorizeService {
  constructor(
    private readonly rpc: RpcClient,
    private readonly sessions: SessionsService,
  ) {}

  /** `url` is the request's path and query as received. */
  async show(cookieHeader: string | undefined, url: string): Promise<AuthorizePage> {
    const session = await this.sessions.resolve(cookieHeader);
    // RFC 6749 §3.1: the sign-in page, which brings the member back to this very request.
    if (!session) return { outcome: 'sign_in', location: loginLocation(url) };
    const answer = await this.rpc.call(AUTH_AUTHORIZE_VALIDATE, parseAuthorizeQuery(url));
    if (answer.outcome !== 'consent') return fromOutcome(answer);
    // Always shown, even when allowed before: anyone can present a public client_id (RFC 6749 §10.2).
    return {
      outcome: 'consent',
      clientName: answer.client_name,
      scopes: answer.scopes,
      params: answer.params,
      csrfToken: session.csrfToken,
    };
  }

  /**
   * Allow or Deny, CSRF-protected so no other page can post "allow" for the member (RFC 6749
   * §10.12, RFC 9700 §4.7). auth-server re-validates every posted parameter.
   */
  async decide(cookieHeader: string | undefined, form: DecisionForm): Promise<DecisionResult> {
    const session = await this.sessions.requireForPost(cookieHeader, form.csrf);
    if (form.decision !== 'allow' && form.decision !== 'deny')
      throw new AuthorizeException('invalid_decision');
    const answer = await this.rpc.call(AUTH_AUTHORIZE_DECIDE, {
      user_id: session.userId,
      params: form.params,
      decision: form.decision,
    });
    if (answer.outcome === 'consent') {
      throw new Error('auth.authorize.decide answered "consent"; it must redirect or show an error');
    }
    return fromOutcome(answer);
  }
}

function fromOutcome(answer: Exclude<AuthorizeOutcome, { outcome: 'consent' }>): DecisionResult {
  switch (answer.outcome) {
    case 'redirect':
      return { outcome: 'redirect', location: answer.redirect_to };
    case 'error_page':
      return { outcome: 'error_page', error: answer.error, description: answer.error_description };
    default:
      return assertUnreachable(answer);
  }
}

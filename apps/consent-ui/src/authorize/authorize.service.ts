import { Injectable } from '@nestjs/common';
import { AUTH_AUTHORIZE_DECIDE, AUTH_AUTHORIZE_VALIDATE, type AuthorizeOutcome } from '@svc/contracts';
import { RpcClient } from '@svc/platform';
import { loginLocation } from '../login/return-to';
import { SessionsService } from '../sessions/sessions.service';
import { parseAuthorizeQuery, type DecisionForm } from './authorize-request';
import { AuthorizeException } from './authorize.exception';

/** A decision as auth-server answered it: a redirect it built, or an error page. */
export type DecisionResult = Exclude<AuthorizeOutcome, { outcome: 'consent' }>;

/** What GET /oauth/authorize shows: sign-in first, or auth-server's answer (consent with the CSRF token). */
export type AuthorizePage =
  | { readonly outcome: 'sign_in'; readonly location: string }
  | (Extract<AuthorizeOutcome, { outcome: 'consent' }> & { readonly csrfToken: string })
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
    // Always shown, even when allowed before: anyone can present a public client_id (RFC 6749 §10.2).
    return answer.outcome === 'consent' ? { ...answer, csrfToken: session.csrfToken } : answer;
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
    return answer;
  }
}

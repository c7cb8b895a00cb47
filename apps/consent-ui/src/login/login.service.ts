import { Injectable } from '@nestjs/common';
import { API_LIMITS, AUTH_LOGIN } from '@svc/contracts';
import { RpcClient } from '@svc/platform';
import { SessionsService } from '../sessions/sessions.service';
import type { LoginForm } from './login-form.dto';
import { safeReturnTo } from './return-to';

/** What the sign-in page shows. */
export interface LoginFormState {
  readonly returnTo: string;
  readonly csrfToken: string;
  readonly email: string;
  readonly problem?: LoginProblem;
  /** With `too_many_attempts`: when the member may try again. */
  readonly retryAfterSeconds?: number;
}

export type LoginProblem =
  /** Wrong e-mail or password; which one is never said (no account enumeration). */
  | 'invalid_credentials'
  | 'missing_fields'
  /** The form's CSRF token did not match its cookie (stale form, or a cross-site post). */
  | 'form_expired'
  /** Too many failed attempts for this account (auth-server's throttle); the password was not checked. */
  | 'too_many_attempts';

export type SignInOutcome =
  | { readonly outcome: 'signed_in'; readonly returnTo: string; readonly cookies: readonly string[] }
  | { readonly outcome: 'retry'; readonly form: LoginFormState; readonly cookies: readonly string[] };

export type SignOutPage =
  | { readonly outcome: 'confirm'; readonly csrfToken: string }
  | { readonly outcome: 'signed_out'; readonly cookies: readonly string[] };

/** Sign-in and sign-out. auth-server checks the password; this app owns the browser session. */
@Injectable()
export class LoginService {
  constructor(
    private readonly rpc: RpcClient,
    private readonly sessions: SessionsService,
  ) {}

  showForm(cookieHeader: string | undefined, returnTo: unknown): { form: LoginFormState; cookies: string[] } {
    const csrf = this.sessions.loginCsrf(cookieHeader);
    return {
      form: { returnTo: safeReturnTo(returnTo), csrfToken: csrf.token, email: '' },
      cookies: csrf.cookies,
    };
  }

  /** `clientIp`: the browser's address, for auth-server's per-address throttle. */
  async signIn(cookieHeader: string | undefined, form: LoginForm, clientIp?: string): Promise<SignInOutcome> {
    const returnTo = safeReturnTo(form.returnTo);
    const retry = (problem: LoginProblem, retryAfterSeconds?: number): SignInOutcome => {
      const csrf = this.sessions.loginCsrf(cookieHeader);
      return {
        outcome: 'retry',
        form: { returnTo, csrfToken: csrf.token, email: form.email, problem, retryAfterSeconds },
        cookies: csrf.cookies,
      };
    };
    if (!this.sessions.loginCsrfMatches(cookieHeader, form.csrf)) return retry('form_expired');
    if (form.email === '' || form.password === '') return retry('missing_fields');
    // Nothing this long, or holding a NUL, is anyone's e-mail or password (auth-server could not even look it up).
    if (
      form.email.length > API_LIMITS.emailMaxLength ||
      form.password.length > API_LIMITS.passwordMaxLength ||
      form.email.includes('\u0000') ||
      form.password.includes('\u0000')
    ) {
      return retry('invalid_credentials');
    }
    const result = await this.rpc.call(AUTH_LOGIN, {
      email: form.email,
      password: form.password,
      ...(clientIp === undefined ? {} : { client_ip: clientIp }),
    });
    if (!result.ok) {
      const throttled = result.retry_after_seconds !== undefined;
      return retry(throttled ? 'too_many_attempts' : 'invalid_credentials', result.retry_after_seconds);
    }
    const { cookies } = await this.sessions.start(result.user_id, cookieHeader);
    return { outcome: 'signed_in', returnTo, cookies };
  }

  /** GET /logout: a confirmation form (a GET must not change state), or straight to sign-in. */
  async signOutPage(cookieHeader: string | undefined): Promise<SignOutPage> {
    const session = await this.sessions.resolve(cookieHeader);
    if (!session) return { outcome: 'signed_out', cookies: [] };
    return { outcome: 'confirm', csrfToken: session.csrfToken };
  }

  /** POST /logout: CSRF-checked; without a live session the answer is as after a sign-out. */
  async signOut(cookieHeader: string | undefined, csrf: unknown): Promise<readonly string[]> {
    const session = await this.sessions.resolve(cookieHeader);
    if (session) this.sessions.assertCsrf(session, csrf);
    return this.sessions.end(cookieHeader);
  }
}

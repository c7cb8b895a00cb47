import { serializeCookie, type CookieOptions } from './cookies';

export const SESSION_COOKIE = 'svc_session';
/** The pre-session CSRF cookie of the sign-in form (double submit). */
export const LOGIN_CSRF_COOKIE = 'svc_login_csrf';

export const SESSION_TTL_SECONDS = 12 * 60 * 60;
const LOGIN_CSRF_TTL_SECONDS = 2 * 60 * 60;

/** Whether cookies carry `Secure`; decided once at start-up from the configuration. */
export interface CookiePolicy {
  readonly secure: boolean;
}
export const COOKIE_POLICY = Symbol('COOKIE_POLICY');

/**
 * Every cookie of this app is HttpOnly (no script ever needs one, so XSS cannot read them) and
 * SameSite=Lax: sent on the top-level GET that arrives from a partner's site (the authorization
 * request must see the session), never on a cross-site POST, which backs up the CSRF tokens.
 */
function options(policy: CookiePolicy, path: string, maxAge?: number): CookieOptions {
  return { path, httpOnly: true, secure: policy.secure, sameSite: 'Lax', maxAge };
}

export function sessionCookie(policy: CookiePolicy, sessionId: string): string {
  return serializeCookie(SESSION_COOKIE, sessionId, options(policy, '/', SESSION_TTL_SECONDS));
}

export function clearSessionCookie(policy: CookiePolicy): string {
  return serializeCookie(SESSION_COOKIE, '', options(policy, '/', 0));
}

export function loginCsrfCookie(policy: CookiePolicy, token: string): string {
  return serializeCookie(LOGIN_CSRF_COOKIE, token, options(policy, '/login', LOGIN_CSRF_TTL_SECONDS));
}

export function clearLoginCsrfCookie(policy: CookiePolicy): string {
  return serializeCookie(LOGIN_CSRF_COOKIE, '', options(policy, '/login', 0));
}

/** A one-shot message for the next page at `path` (e.g. "X can no longer read your record."). */
export function flashCookie(policy: CookiePolicy, name: string, path: string, message: string): string {
  return serializeCookie(name, encodeURIComponent(message), options(policy, path, 60));
}

export function clearFlashCookie(policy: CookiePolicy, name: string, path: string): string {
  return serializeCookie(name, '', options(policy, path, 0));
}

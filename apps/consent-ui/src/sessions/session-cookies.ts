import { serializeCookie, type CookieOptions } from './cookies';
import type { SessionKind } from './session-store';

export const SESSION_COOKIE = 'svc_session';
/**
 * Production's session cookie: `__Host-` stops a sibling subdomain or a plain-HTTP page from
 * setting it (cookie tossing). The sandbox over http://localhost cannot be Secure.
 */
export const HOST_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`;
/** The pre-session CSRF cookie of the sign-in form (double submit). */
export const LOGIN_CSRF_COOKIE = 'svc_login_csrf';

export const SESSION_TTL_SECONDS = 12 * 60 * 60;
const LOGIN_CSRF_TTL_SECONDS = 2 * 60 * 60;

/** Whether cookies carry `Secure`; decided once at start-up from the configuration. */
export interface CookiePolicy {
  readonly secure: boolean;
  /**
   * Production's prefixed names: the session cookie is HOST_SESSION_COOKIE, the portal's
   * `__Secure-svc_portal` (portal-cookies.ts); needs `secure`.
   */
  readonly hostPrefix?: boolean;
}

/** A cookie's name in this mode, `prefix` added where the policy prefixes names; only this name is read. */
export function cookieName(policy: CookiePolicy, name: string, prefix: '__Host-' | '__Secure-'): string {
  if (policy.hostPrefix && !policy.secure) throw new Error(`a ${prefix} cookie must be Secure`);
  return policy.hostPrefix ? `${prefix}${name}` : name;
}
export const COOKIE_POLICY = Symbol('COOKIE_POLICY');

/**
 * HttpOnly (no script needs one) and SameSite=Lax: sent on the top-level GET from a partner's
 * site (the authorization request needs the session), never on a cross-site POST.
 */
function options(policy: CookiePolicy, path: string, maxAge?: number): CookieOptions {
  return { path, httpOnly: true, secure: policy.secure, sameSite: 'Lax', maxAge };
}

/** A crew member's signed-in browser: its session holds the member. */
export interface CrewSessionData {
  readonly userId: string;
}

/**
 * Crew members' sessions: 12 hours at most, signed out when idle for `idleMs`
 * (SESSION_IDLE_TIMEOUT). Path=/ and no Domain attribute (serializeCookie never writes one), as
 * __Host- requires.
 */
export function crewSessionKind(policy: CookiePolicy, idleMs: number): SessionKind<CrewSessionData> {
  return {
    table: 'sessions',
    columns: { userId: 'user_id' },
    idleMs,
    cookie: {
      name: cookieName(policy, SESSION_COOKIE, '__Host-'),
      path: '/',
      secure: policy.secure,
      sameSite: 'Lax',
    },
    lifetimeSeconds: SESSION_TTL_SECONDS,
  };
}

export function loginCsrfCookie(policy: CookiePolicy, token: string): string {
  return serializeCookie(LOGIN_CSRF_COOKIE, token, options(policy, '/login', LOGIN_CSRF_TTL_SECONDS));
}

/** A one-shot message for the next page at `path` (e.g. "X can no longer read your record."). */
export function flashCookie(policy: CookiePolicy, name: string, path: string, message: string): string {
  return serializeCookie(name, encodeURIComponent(message), options(policy, path, 60));
}

/** The cookie that clears this app's cookie `name` on `path` (the login CSRF cookie, a flash message). */
export function clearCookie(policy: CookiePolicy, name: string, path: string): string {
  return serializeCookie(name, '', options(policy, path, 0));
}

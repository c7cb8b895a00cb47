import { Inject, Injectable } from '@nestjs/common';
import { constantTimeEqual, newSecret } from '@svc/platform';
import { parseCookies } from './cookies';
import { isRandomToken } from './secrets';
import {
  clearCookie,
  COOKIE_POLICY,
  crewSessionKind,
  LOGIN_CSRF_COOKIE,
  loginCsrfCookie,
  type CookiePolicy,
  type CrewSessionData,
} from './session-cookies';
import { CLOCK, SessionStore, type Clock, type Session } from './session-store';
import { SessionException } from './sessions.exception';
import { SessionsRepository } from './sessions.repository';

/** SESSION_IDLE_TIMEOUT in milliseconds. */
export const SESSION_IDLE_TIMEOUT_MS = Symbol('SESSION_IDLE_TIMEOUT_MS');
export const DEFAULT_SESSION_IDLE_TIMEOUT_MS = 30 * 60_000;

/** A signed-in browser, as the features see it; `csrfToken` is what every POST form must carry. */
export type ActiveSession = Session<CrewSessionData>;

/** Crew members' sessions (a SessionStore of their kind) and the sign-in form's CSRF protection. */
@Injectable()
export class SessionsService {
  private readonly store: SessionStore<CrewSessionData>;

  constructor(
    rows: SessionsRepository,
    @Inject(COOKIE_POLICY) private readonly policy: CookiePolicy,
    @Inject(CLOCK) clock: Clock,
    @Inject(SESSION_IDLE_TIMEOUT_MS) idleTimeoutMs: number = DEFAULT_SESSION_IDLE_TIMEOUT_MS,
  ) {
    this.store = new SessionStore(crewSessionKind(policy, idleTimeoutMs), rows, clock);
  }

  resolve(cookieHeader: string | undefined): Promise<ActiveSession | undefined> {
    return this.store.resolve(cookieHeader);
  }

  /**
   * The live session of a state-changing request whose form carried `presentedCsrf`. Without it
   * any site could make a signed-in member's browser allow a partner or disconnect one (RFC 6749
   * §10.12, RFC 9700 §4.7).
   */
  async requireForPost(cookieHeader: string | undefined, presentedCsrf: unknown): Promise<ActiveSession> {
    const session = await this.resolve(cookieHeader);
    if (!session) throw new SessionException('session_required');
    this.assertCsrf(session, presentedCsrf);
    return session;
  }

  assertCsrf(session: ActiveSession, presentedCsrf: unknown): void {
    if (!this.store.csrfMatches(session, presentedCsrf)) throw new SessionException('csrf_mismatch');
  }

  /** Signs `userId` in with a brand-new session, ending the browser's previous one (no fixation). */
  async start(
    userId: string,
    cookieHeader: string | undefined,
  ): Promise<{ session: ActiveSession; cookies: string[] }> {
    const { session, cookie } = await this.store.start(cookieHeader, { userId });
    return { session, cookies: [cookie, clearCookie(this.policy, LOGIN_CSRF_COOKIE, '/login')] };
  }

  async end(cookieHeader: string | undefined): Promise<string[]> {
    return [await this.store.end(cookieHeader)];
  }

  /**
   * The sign-in form has no session yet: a double-submit cookie stops login CSRF. An existing value
   * is reused, so two open sign-in tabs both keep working.
   */
  loginCsrf(cookieHeader: string | undefined): { token: string; cookies: string[] } {
    const existing = parseCookies(cookieHeader).get(LOGIN_CSRF_COOKIE);
    const token = isRandomToken(existing) ? existing : newSecret();
    return { token, cookies: [loginCsrfCookie(this.policy, token)] };
  }

  loginCsrfMatches(cookieHeader: string | undefined, presented: unknown): boolean {
    const cookie = parseCookies(cookieHeader).get(LOGIN_CSRF_COOKIE);
    return isRandomToken(cookie) && constantTimeEqual(cookie, presented);
  }
}

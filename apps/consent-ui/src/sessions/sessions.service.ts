import { Inject, Injectable } from '@nestjs/common';
import { constantTimeEqual, newSecret } from '@svc/platform';
import { parseCookies } from './cookies';
import { digestSessionId, isRandomToken, sessionCsrfToken } from './secrets';
import {
  clearLoginCsrfCookie,
  clearSessionCookie,
  COOKIE_POLICY,
  LOGIN_CSRF_COOKIE,
  loginCsrfCookie,
  SESSION_TTL_SECONDS,
  sessionCookie,
  sessionCookieName,
  type CookiePolicy,
} from './session-cookies';
import { SessionException } from './sessions.exception';
import { SessionsRepository } from './sessions.repository';

export type Clock = () => Date;
export const CLOCK = Symbol('CLOCK');
/** SESSION_IDLE_TIMEOUT in milliseconds. */
export const SESSION_IDLE_TIMEOUT_MS = Symbol('SESSION_IDLE_TIMEOUT_MS');
export const DEFAULT_SESSION_IDLE_TIMEOUT_MS = 30 * 60_000;
/** last_seen_at is written at most this often per session: one UPDATE a minute, not per page. */
export const LAST_SEEN_RESOLUTION_MS = 60_000;

/** A signed-in browser, as the features see it. */
export interface ActiveSession {
  readonly userId: string;
  /** The token every POST form of this session must carry. */
  readonly csrfToken: string;
  readonly expiresAt: Date;
}

const EXPIRED_PURGE_BATCH = 100;

/**
 * Browser sessions and their CSRF protection. The session id lives only in the HttpOnly cookie;
 * the database keeps its SHA-256. A session idle longer than SESSION_IDLE_TIMEOUT is signed out.
 */
@Injectable()
export class SessionsService {
  constructor(
    private readonly sessions: SessionsRepository,
    @Inject(COOKIE_POLICY) private readonly policy: CookiePolicy,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(SESSION_IDLE_TIMEOUT_MS)
    private readonly idleTimeoutMs: number = DEFAULT_SESSION_IDLE_TIMEOUT_MS,
  ) {}

  /** The live session the request's cookie names, if any. */
  async resolve(cookieHeader: string | undefined): Promise<ActiveSession | undefined> {
    const id = this.sessionIdFrom(cookieHeader);
    if (!id) return undefined;
    const now = this.clock();
    const digest = digestSessionId(id);
    const stored = await this.sessions.findLive(digest, now);
    if (!stored) return undefined;
    const idleMs = now.getTime() - stored.lastSeenAt.getTime();
    if (idleMs > this.idleTimeoutMs) {
      await this.sessions.delete(digest);
      return undefined;
    }
    if (idleMs >= LAST_SEEN_RESOLUTION_MS) await this.sessions.touch(digest, now);
    return {
      userId: stored.userId,
      csrfToken: sessionCsrfToken(stored.csrfSecret, id),
      expiresAt: stored.expiresAt,
    };
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
    if (!constantTimeEqual(session.csrfToken, presentedCsrf)) throw new SessionException('csrf_mismatch');
  }

  /**
   * Signs `userId` in with a brand-new session id, ending the browser's previous session if it
   * had one: an id planted before sign-in never becomes a signed-in session (session fixation).
   */
  async start(
    userId: string,
    cookieHeader: string | undefined,
  ): Promise<{ session: ActiveSession; cookies: string[] }> {
    const now = this.clock();
    const previous = this.sessionIdFrom(cookieHeader);
    if (previous) await this.sessions.delete(digestSessionId(previous));
    await this.sessions.deleteExpired(now, EXPIRED_PURGE_BATCH);
    const id = newSecret();
    const csrfSecret = newSecret();
    const expiresAt = new Date(now.getTime() + SESSION_TTL_SECONDS * 1000);
    await this.sessions.insert({
      idDigest: digestSessionId(id),
      userId,
      csrfSecret,
      createdAt: now,
      lastSeenAt: now,
      expiresAt,
    });
    return {
      session: { userId, csrfToken: sessionCsrfToken(csrfSecret, id), expiresAt },
      cookies: [sessionCookie(this.policy, id), clearLoginCsrfCookie(this.policy)],
    };
  }

  /** Ends the session the cookie names (if any) and returns the cookie that clears it. */
  async end(cookieHeader: string | undefined): Promise<string[]> {
    const id = this.sessionIdFrom(cookieHeader);
    if (id) await this.sessions.delete(digestSessionId(id));
    return [clearSessionCookie(this.policy)];
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

  /** Only a value with the shape of a session id is looked up. */
  private sessionIdFrom(cookieHeader: string | undefined): string | undefined {
    const value = parseCookies(cookieHeader).get(sessionCookieName(this.policy));
    return isRandomToken(value) ? value : undefined;
  }
}

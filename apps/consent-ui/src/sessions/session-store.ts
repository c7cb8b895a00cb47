import { constantTimeEqual, newSecret } from '@svc/platform';
import { parseCookies, serializeCookie, type CookieOptions } from './cookies';
import { digestSessionId, isRandomToken, sessionCsrfToken } from './secrets';
import type { SessionTable, StoredSession } from './session.entity';
import type { SessionsRepository } from './sessions.repository';

export type Clock = () => Date;
export const CLOCK = Symbol('CLOCK');
/** last_seen_at is written at most this often per session: one UPDATE a minute, not per page. */
export const LAST_SEEN_RESOLUTION_MS = 60_000;
const EXPIRED_PURGE_BATCH = 100;

/** One kind of browser session (a crew member's, a partner portal's), as data. */
export interface SessionKind<D extends object> extends SessionTable<D> {
  /** The cookie that holds the session id: always HttpOnly, its Max-Age the absolute lifetime. */
  readonly cookie: Pick<CookieOptions, 'path' | 'secure' | 'sameSite' | 'partitioned'> & {
    readonly name: string;
  };
  readonly lifetimeSeconds: number;
}

/** A live session as the pages see it: its kind's data and the token its forms must carry. */
export type Session<D extends object> = D & { readonly csrfToken: string; readonly expiresAt: Date };

/** The kind's cookie holding `value` (an empty one with Max-Age 0 clears it). */
export function sessionCookieOf(
  kind: SessionKind<object>,
  value: string,
  maxAge = kind.lifetimeSeconds,
): string {
  return serializeCookie(kind.cookie.name, value, { ...kind.cookie, httpOnly: true, maxAge });
}

/**
 * Browser sessions of one kind. The session id lives only in the HttpOnly cookie; the table keeps
 * its SHA-256. A session ends at its absolute lifetime, or when idle for longer than the kind's
 * idle lifetime. Each has its own CSRF secret, so a form's token is good for that session alone.
 */
export class SessionStore<D extends object> {
  constructor(
    readonly kind: SessionKind<D>,
    private readonly rows: SessionsRepository,
    private readonly clock: Clock,
  ) {}

  /**
   * The live session the request's cookie names, if any. `stillValid` may end it (e.g. its
   * partner was suspended since it began).
   */
  async resolve(
    cookieHeader: string | undefined,
    stillValid?: (data: D) => Promise<boolean>,
  ): Promise<Session<D> | undefined> {
    const id = this.idFrom(cookieHeader);
    if (!id) return undefined;
    const now = this.clock();
    const digest = digestSessionId(id);
    const stored = (await this.rows.findLive(this.kind, digest, now)) as StoredSession<D> | null;
    if (!stored) return undefined;
    const idleMs = stored.lastSeenAt && now.getTime() - stored.lastSeenAt.getTime();
    const idle = idleMs !== undefined && this.kind.idleMs !== undefined && idleMs > this.kind.idleMs;
    if (idle || (stillValid && !(await stillValid(this.dataOf(stored))))) {
      await this.rows.delete(this.kind, digest);
      return undefined;
    }
    if (idleMs !== undefined && idleMs >= LAST_SEEN_RESOLUTION_MS)
      await this.rows.touch(this.kind, digest, now);
    return this.session(id, stored);
  }

  /**
   * A brand-new session holding `data`, ending the browser's previous one of this kind if it had
   * one: an id planted beforehand never becomes a live session (session fixation). Expired
   * sessions of the kind are purged on the way, a bounded batch.
   */
  async start(cookieHeader: string | undefined, data: D): Promise<{ session: Session<D>; cookie: string }> {
    const now = this.clock();
    const previous = this.idFrom(cookieHeader);
    if (previous) await this.rows.delete(this.kind, digestSessionId(previous));
    await this.rows.deleteExpired(this.kind, now, EXPIRED_PURGE_BATCH);
    const id = newSecret();
    const stored: StoredSession<D> = {
      ...data,
      idDigest: digestSessionId(id),
      csrfSecret: newSecret(),
      createdAt: now,
      ...(this.kind.idleMs !== undefined ? { lastSeenAt: now } : {}),
      expiresAt: new Date(now.getTime() + this.kind.lifetimeSeconds * 1000),
    };
    await this.rows.insert(this.kind, stored);
    return { session: this.session(id, stored), cookie: sessionCookieOf(this.kind, id) };
  }

  /** Ends the session the cookie names (if any) and returns the cookie that clears it. */
  async end(cookieHeader: string | undefined): Promise<string> {
    const id = this.idFrom(cookieHeader);
    if (id) await this.rows.delete(this.kind, digestSessionId(id));
    return sessionCookieOf(this.kind, '', 0);
  }

  /** Whether a posted form carried this session's CSRF token (a form of another site never does). */
  csrfMatches(session: Session<D>, presented: unknown): boolean {
    return constantTimeEqual(session.csrfToken, presented);
  }

  /** Only a value with the shape of a session id, under the kind's cookie name, is looked up. */
  private idFrom(cookieHeader: string | undefined): string | undefined {
    const value = parseCookies(cookieHeader).get(this.kind.cookie.name);
    return isRandomToken(value) ? value : undefined;
  }

  private dataOf(stored: StoredSession<D>): D {
    const data: Record<string, unknown> = {};
    for (const field of Object.keys(this.kind.columns)) data[field] = stored[field as keyof StoredSession<D>];
    return data as D;
  }

  private session(id: string, stored: StoredSession<D>): Session<D> {
    return {
      ...this.dataOf(stored),
      csrfToken: sessionCsrfToken(stored.csrfSecret, id),
      expiresAt: stored.expiresAt,
    };
  }
}

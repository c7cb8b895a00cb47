import { createHmac } from 'node:crypto';
import { sha256Hex } from '@svc/platform';

/** The shape of every token `newSecret()` makes; anything else is refused before any lookup. */
export function isRandomToken(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9_-]{43}$/.test(value);
}

/** The database keeps only this, so a leaked table yields no usable session cookie. */
export function digestSessionId(sessionId: string): string {
  return sha256Hex(sessionId);
}

/**
 * HMAC-SHA256 of the session id under the session's own secret: useless in another session, and
 * derivable neither from the cookie alone nor from the database row alone.
 */
export function sessionCsrfToken(csrfSecret: string, sessionId: string): string {
  return createHmac('sha256', Buffer.from(csrfSecret, 'base64url'))
    .update(`csrf:${sessionId}`, 'utf8')
    .digest('base64url');
}

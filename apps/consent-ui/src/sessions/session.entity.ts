/** A signed-in browser (`sessions`). Never leaves the sessions feature. */
export interface StoredSession {
  /** SHA-256 (hex) of the session id in the cookie; the id itself is never stored. */
  readonly idDigest: string;
  readonly userId: string;
  /** Key of this session's CSRF tokens (base64url, 256 bits). */
  readonly csrfSecret: string;
  readonly createdAt: Date;
  /** The last request that used the session, to a minute (the idle timeout). */
  readonly lastSeenAt: Date;
  readonly expiresAt: Date;
}

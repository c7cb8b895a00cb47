/** A stored session of either kind (`sessions`, `portal_sessions`). Never leaves the session store. */
export type StoredSession<D extends object = Record<string, unknown>> = D & {
  /** SHA-256 (hex) of the session id in the cookie; the id itself is never stored. */
  readonly idDigest: string;
  /** Key of this session's CSRF tokens (base64url, 256 bits). */
  readonly csrfSecret: string;
  readonly createdAt: Date;
  /** Kinds with an idle lifetime: the last request that used the session, to a minute. */
  readonly lastSeenAt?: Date;
  readonly expiresAt: Date;
};

/** Where a kind's sessions are kept: the table, and the column of each field of its data. */
export interface SessionTable<D extends object = Record<string, unknown>> {
  readonly table: 'sessions' | 'portal_sessions';
  readonly columns: { readonly [K in keyof D]: string };
  /** Idle lifetime in milliseconds (the table has `last_seen_at`); none: the absolute one only. */
  readonly idleMs?: number;
}

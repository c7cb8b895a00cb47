/**
 * An access token and the refresh token issued with it. Revoking either revokes the row, so the
 * pair lives and dies together (RFC 7009 §2.1); `code_digest` ties every rotation back to the
 * authorization code, so a replayed code can revoke all it issued (RFC 9700 §4.5); it is also the refresh-token family
 * that a reused rotated refresh token ends (RFC 9700 §4.14.2).
 */
export interface TokenPairEntity {
  id: string;
  codeDigest: string;
  userId: string;
  clientId: string;
  scopes: string[];
  accessDigest: string;
  refreshDigest: string;
  accessExpiresAt: Date;
  refreshExpiresAt: Date;
  createdAt: Date;
  revokedAt: Date | null;
  revokedReason: string | null;
  /** The pair a rotation (or a grace re-issue) replaced this one with. */
  replacedBy: string | null;
}

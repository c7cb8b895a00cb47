/**
 * An access token and its refresh token, revoked together (RFC 7009 §2.1). `code_digest` is the
 * family a replayed code (RFC 9700 §4.5) or a reused refresh token (§4.14.2) revokes.
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

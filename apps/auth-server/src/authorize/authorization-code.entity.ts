/** A single-use authorization code (RFC 6749 §4.1.2), bound to everything it was issued for. */
export interface AuthorizationCodeEntity {
  codeDigest: string;
  clientId: string;
  userId: string;
  redirectUri: string;
  scopes: string[];
  codeChallenge: string;
  expiresAt: Date;
  consumedAt: Date | null;
  createdAt: Date;
}

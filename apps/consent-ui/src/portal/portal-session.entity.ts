/** A partner portal session (`portal_sessions`). Never leaves the portal feature. */
export interface StoredPortalSession {
  /** SHA-256 (hex) of the session id in the cookie; the id itself is never stored. */
  readonly idDigest: string;
  /** A public reference (`pps_…`) that the actions it makes are recorded with. */
  readonly ref: string;
  readonly clientId: string;
  readonly partnerName: string;
  readonly sponsorship: boolean;
  /** Origins that may frame the portal (the framing origins registered for the partner). */
  readonly frameOrigins: readonly string[];
  /** Key of this session's CSRF tokens (base64url, 256 bits). */
  readonly csrfSecret: string;
  readonly createdAt: Date;
  readonly expiresAt: Date;
}

export interface PartnerEntity {
  clientId: string;
  secretDigest: string;
  name: string;
  redirectUris: string[];
  /** The only origins that may frame the partner's portal (each `https://host[:port]`); none by default. */
  frameOrigins: string[];
  allowedScopes: string[];
  webhookUrl: string | null;
  /** Sealed with SecretBox; never the plain secret. */
  webhookSecretCurrent: string | null;
  webhookSecretNext: string | null;
  sponsorship: boolean;
  memberLeft: boolean;
  suspended: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** An Ed25519 webhook signing key (`webhook_signing_keys`). */
export interface SigningKeyEntity {
  /** `whk_…`, shown to the partner. */
  id: string;
  /** The base64 of its PKCS #8 DER, sealed with SecretBox; never the plain key. */
  privateKey: string;
  /** `whpk_` and the base64 of the raw 32-byte public key. */
  publicKey: string;
  createdAt: Date;
  /** Null while it is the newest; otherwise when it stops signing. */
  expiresAt: Date | null;
}

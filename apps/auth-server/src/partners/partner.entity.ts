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

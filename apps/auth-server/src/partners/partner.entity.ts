export interface PartnerEntity {
  clientId: string;
  secretDigest: string;
  name: string;
  redirectUris: string[];
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

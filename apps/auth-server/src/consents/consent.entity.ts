/** A crew member's standing permission for one partner; at most one active per member and partner. */
export interface ConsentEntity {
  /** bigserial, which node-postgres reads as a string. */
  id: string;
  userId: string;
  clientId: string;
  scopes: string[];
  connectedAt: Date;
  updatedAt: Date;
  revokedAt: Date | null;
}

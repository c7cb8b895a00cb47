/** A crew member's sign-in credentials (`users`). The crew record itself belongs to crew-api. */
export interface UserEntity {
  userId: string;
  /** Trimmed and lower-cased. */
  email: string;
  passwordHash: string;
  name: string;
  createdAt: Date;
  updatedAt: Date;
}

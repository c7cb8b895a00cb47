import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A single-use authorization code (RFC 6749 §4.1.2), bound to everything it was issued for. */
@Entity({ name: 'authorization_codes' })
export class AuthorizationCodeEntity {
  @PrimaryColumn({ name: 'code_digest', type: 'text' })
  codeDigest!: string;

  @Column({ name: 'client_id', type: 'text' })
  clientId!: string;

  @Column({ name: 'user_id', type: 'text' })
  userId!: string;

  @Column({ name: 'redirect_uri', type: 'text' })
  redirectUri!: string;

  @Column({ type: 'text', array: true })
  scopes!: string[];

  @Column({ name: 'code_challenge', type: 'text' })
  codeChallenge!: string;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt!: Date;

  @Column({ name: 'consumed_at', type: 'timestamptz', nullable: true })
  consumedAt!: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;
}

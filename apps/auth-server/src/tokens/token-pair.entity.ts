import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * An access token and the refresh token issued with it. Revoking either revokes the row, so the
 * pair lives and dies together (RFC 7009 §2.1); `code_digest` ties every rotation back to the
 * authorization code, so a replayed code can revoke all it issued (RFC 9700 §4.5); it is also the refresh-token family
 * that a reused rotated refresh token ends (RFC 9700 §4.14.2).
 */
@Entity({ name: 'token_pairs' })
export class TokenPairEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'code_digest', type: 'text' })
  codeDigest!: string;

  @Column({ name: 'user_id', type: 'text' })
  userId!: string;

  @Column({ name: 'client_id', type: 'text' })
  clientId!: string;

  @Column({ type: 'text', array: true })
  scopes!: string[];

  @Column({ name: 'access_digest', type: 'text', unique: true })
  accessDigest!: string;

  @Column({ name: 'refresh_digest', type: 'text', unique: true })
  refreshDigest!: string;

  @Column({ name: 'access_expires_at', type: 'timestamptz' })
  accessExpiresAt!: Date;

  @Column({ name: 'refresh_expires_at', type: 'timestamptz' })
  refreshExpiresAt!: Date;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt!: Date | null;

  @Column({ name: 'revoked_reason', type: 'text', nullable: true })
  revokedReason!: string | null;

  /** The pair a rotation (or a grace re-issue) replaced this one with. */
  @Column({ name: 'replaced_by', type: 'text', nullable: true })
  replacedBy!: string | null;
}

import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** A signed-in browser. Never leaves the sessions feature: SessionsRepository maps it. */
@Entity({ name: 'sessions' })
@Index('sessions_expires_at', ['expiresAt'])
export class SessionEntity {
  /** SHA-256 (hex) of the session id in the cookie; the id itself is never stored. */
  @PrimaryColumn({ name: 'id_digest', type: 'text' })
  idDigest!: string;

  @Column({ name: 'user_id', type: 'text' })
  userId!: string;

  /** Key of this session's CSRF tokens (base64url, 256 bits). */
  @Column({ name: 'csrf_secret', type: 'text' })
  csrfSecret!: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'last_seen_at', type: 'timestamptz' })
  lastSeenAt!: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt!: Date;
}

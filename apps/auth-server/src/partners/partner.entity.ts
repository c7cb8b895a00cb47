import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'partners' })
export class PartnerEntity {
  @PrimaryColumn({ name: 'client_id', type: 'text' })
  clientId!: string;

  @Column({ name: 'secret_digest', type: 'text' })
  secretDigest!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ name: 'redirect_uris', type: 'text', array: true })
  redirectUris!: string[];

  @Column({ name: 'allowed_scopes', type: 'text', array: true })
  allowedScopes!: string[];

  @Column({ name: 'webhook_url', type: 'text', nullable: true })
  webhookUrl!: string | null;

  /** Sealed with SecretBox; never the plain secret. */
  @Column({ name: 'webhook_secret_current', type: 'text', nullable: true })
  webhookSecretCurrent!: string | null;

  @Column({ name: 'webhook_secret_next', type: 'text', nullable: true })
  webhookSecretNext!: string | null;

  @Column({ type: 'boolean', default: false })
  sponsorship!: boolean;

  @Column({ name: 'member_left', type: 'boolean', default: false })
  memberLeft!: boolean;

  @Column({ type: 'boolean', default: false })
  suspended!: boolean;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt!: Date;
}

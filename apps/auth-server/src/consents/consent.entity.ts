import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A crew member's standing permission for one partner; at most one active per member and partner. */
@Entity({ name: 'consents' })
export class ConsentEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ name: 'user_id', type: 'text' })
  userId!: string;

  @Column({ name: 'client_id', type: 'text' })
  clientId!: string;

  @Column({ type: 'text', array: true })
  scopes!: string[];

  @Column({ name: 'connected_at', type: 'timestamptz', default: () => 'now()' })
  connectedAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt!: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt!: Date | null;
}

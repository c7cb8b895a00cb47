import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A crew member's record head: the profile and the times of the record's latest changes. */
@Entity({ name: 'crew_members' })
export class CrewMemberEntity {
  /** The same id as the member's sign-in identity in auth-server (`usr_…`). */
  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId!: string;

  /** Trimmed and lower-cased. */
  @Column({ type: 'text', unique: true })
  email!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ type: 'text' })
  role!: string;

  @Column({ type: 'text' })
  country!: string;

  @Column({ name: 'photo_url', type: 'text', nullable: true })
  photoUrl!: string | null;

  /** Write time of the latest change of any part of the record. */
  @Column({ name: 'record_updated_at', type: 'timestamptz' })
  recordUpdatedAt!: Date;

  /** Write time of the latest vessel-period change: the `as_of` of a new vessel-history scan. */
  @Column({ name: 'vessels_updated_at', type: 'timestamptz' })
  vesselsUpdatedAt!: Date;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;
}

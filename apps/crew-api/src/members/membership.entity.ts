import { Column, Entity, PrimaryColumn } from 'typeorm';

export const MEMBERSHIP_TIERS = ['free', 'premium'] as const;
export type MembershipTier = (typeof MEMBERSHIP_TIERS)[number];
export const MEMBERSHIP_SOURCES = ['self', 'sponsored', 'vessel'] as const;
export type MembershipSource = (typeof MEMBERSHIP_SOURCES)[number];

/** How the member holds their tier; `sponsor_client_id` names the sponsoring partner. */
@Entity({ name: 'memberships' })
export class MembershipEntity {
  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId!: string;

  @Column({ type: 'text' })
  tier!: MembershipTier;

  @Column({ type: 'text' })
  source!: MembershipSource;

  @Column({ type: 'timestamptz' })
  since!: Date;

  @Column({ name: 'sponsor_client_id', type: 'text', nullable: true })
  sponsorClientId!: string | null;

  /** The seat (sponsorship-api) of a sponsored membership. */
  @Column({ name: 'sponsorship_id', type: 'text', nullable: true })
  sponsorshipId!: string | null;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt!: Date | null;

  /** The seat whose premium was dropped last: a repeated drop for that seat reports the drop again. */
  @Column({ name: 'dropped_sponsorship_id', type: 'text', nullable: true })
  droppedSponsorshipId!: string | null;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt!: Date;
}

import { Column, Entity, PrimaryColumn } from 'typeorm';

export const SEAT_STATUSES = ['invited', 'active', 'ended', 'cancelled'] as const;
export type SeatStatus = (typeof SEAT_STATUSES)[number];
/** Seats that still hold a place (and, when active, premium): reconcile compares only these. */
export const LIVE_STATUSES: readonly SeatStatus[] = ['invited', 'active'];

/** A partner's sponsored seat (decisions.md, Sponsorship). */
@Entity({ name: 'seats' })
export class SeatEntity {
  @PrimaryColumn({ name: 'sponsorship_id', type: 'text' })
  sponsorshipId!: string;

  @Column({ name: 'client_id', type: 'text' })
  clientId!: string;

  /** Trimmed and lower-cased. */
  @Column({ type: 'text' })
  email!: string;

  @Column({ name: 'external_ref', type: 'text', nullable: true })
  externalRef!: string | null;

  @Column({ type: 'text' })
  status!: SeatStatus;

  /** The crew member, once one has this e-mail. */
  @Column({ name: 'user_id', type: 'text', nullable: true })
  userId!: string | null;

  @Column({ name: 'crew_name', type: 'text', nullable: true })
  crewName!: string | null;

  @Column({ name: 'invited_at', type: 'timestamptz' })
  invitedAt!: Date;

  @Column({ name: 'activated_at', type: 'timestamptz', nullable: true })
  activatedAt!: Date | null;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt!: Date;

  @Column({ name: 'closed_at', type: 'timestamptz', nullable: true })
  closedAt!: Date | null;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}

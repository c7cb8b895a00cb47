import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** One status change of a seat: who (a partner's client_id, or `system`), when and why. */
@Entity({ name: 'seat_events' })
export class SeatEventEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ name: 'sponsorship_id', type: 'text' })
  sponsorshipId!: string;

  @Column({ name: 'from_status', type: 'text', nullable: true })
  fromStatus!: string | null;

  @Column({ name: 'to_status', type: 'text' })
  toStatus!: string;

  @Column({ type: 'text' })
  actor!: string;

  @Column({ type: 'text' })
  reason!: string;

  @Column({ type: 'timestamptz' })
  at!: Date;
}

import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One crew-declared line of sea time; `verified` marks the independently confirmed ones. */
@Entity({ name: 'sea_time_entries' })
export class SeaTimeEntryEntity {
  /** `ste_…` */
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'user_id', type: 'text' })
  userId!: string;

  /** Calendar date (`YYYY-MM-DD`); the 12-month trend groups entries by its month. */
  @Column({ type: 'date' })
  date!: string;

  @Column({ name: 'days_at_sea', type: 'integer' })
  daysAtSea!: number;

  @Column({ name: 'nautical_miles', type: 'integer' })
  nauticalMiles!: number;

  @Column({ type: 'text' })
  role!: string;

  @Column({ type: 'boolean', default: false })
  verified!: boolean;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;
}

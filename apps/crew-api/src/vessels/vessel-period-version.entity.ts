import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One version of a vessel period. Versions are never updated except to close them: an amendment
 * sets the current version's `valid_to` to the write time and inserts version + 1 with that
 * `valid_from`. The versions valid at an instant T (`valid_from <= T < valid_to`) are the periods
 * as they were at T.
 */
@Entity({ name: 'vessel_period_versions' })
export class VesselPeriodVersionEntity {
  /** `vp_…`, stable across versions. */
  @PrimaryColumn({ name: 'period_id', type: 'text' })
  periodId!: string;

  @PrimaryColumn({ type: 'integer' })
  version!: number;

  @Column({ name: 'user_id', type: 'text' })
  userId!: string;

  /** Seven digits, the last a check digit. */
  @Column({ type: 'text' })
  imo!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ type: 'text' })
  role!: string;

  @Column({ name: 'period_start', type: 'timestamptz' })
  periodStart!: Date;

  @Column({ name: 'period_end', type: 'timestamptz' })
  periodEnd!: Date;

  @Column({ type: 'integer' })
  days!: number;

  @Column({ name: 'nautical_miles', type: 'integer' })
  nauticalMiles!: number;

  @Column({ name: 'valid_from', type: 'timestamptz' })
  validFrom!: Date;

  @Column({ name: 'valid_to', type: 'timestamptz', nullable: true })
  validTo!: Date | null;
}

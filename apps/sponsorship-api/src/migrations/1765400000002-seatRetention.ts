import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Closed seats by when they closed, for the seat expiry job's pruning (SEAT_RETENTION_DAYS). */
export class SeatRetention1765400000002 implements MigrationInterface {
  name = 'SeatRetention1765400000002';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX "seats_closed_by_age" ON "sponsorship"."seats" ("closed_at")
      WHERE "status" IN ('ended', 'cancelled')`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "sponsorship"."seats_closed_by_age"`);
  }
}

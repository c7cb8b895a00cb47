import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A crew member's access history: reads of their record per partner, scope and UTC day, with
 * the time of the latest. Every replica of crew-api and auth-server adds its counts in one
 * upsert a minute, so a row is written at most once a minute per replica however busy the
 * partner. No foreign keys: history outlives a consent, and is pruned by day (13 months) through
 * its own index.
 */
export class AccessReads1765200000000 implements MigrationInterface {
  name = 'AccessReads1765200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "auth"."access_reads" (
        "user_id" text NOT NULL,
        "client_id" text NOT NULL,
        "scope" text NOT NULL,
        "day" date NOT NULL,
        "count" bigint NOT NULL CHECK ("count" >= 0),
        "last_at" timestamptz NOT NULL,
        PRIMARY KEY ("user_id", "client_id", "scope", "day")
      )`);
    await q.query(`CREATE INDEX "access_reads_by_day" ON "auth"."access_reads" ("day")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "auth"."access_reads"`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Reads per partner, scope and UTC day, one upsert a minute per replica; no FKs: they outlive consents. */
export class AccessReads1765200000000 implements MigrationInterface {
  name = 'AccessReads1765200000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "auth"."access_reads" (
        "user_id" text NOT NULL, "client_id" text NOT NULL, "scope" text NOT NULL, "day" date NOT NULL,
        "count" bigint NOT NULL CHECK ("count" >= 0), "last_at" timestamptz NOT NULL,
        PRIMARY KEY ("user_id", "client_id", "scope", "day")
      );
      CREATE INDEX "access_reads_by_day" ON "auth"."access_reads" ("day")`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "auth"."access_reads"`);
  }
}

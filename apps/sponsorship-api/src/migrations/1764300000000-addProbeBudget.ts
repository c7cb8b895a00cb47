import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A seat matched to a member on provision and closed within 24 h was a probe: charged once, counted over
 * the last 24 h. `sponsors.name` (as the Basic check confirmed it) and `seats_by_user`: the member's page.
 */
export class AddProbeBudget1764300000000 implements MigrationInterface {
  name = 'AddProbeBudget1764300000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE "sponsorship"."seats" ADD COLUMN "matched_on_provision" boolean NOT NULL DEFAULT false;
      ALTER TABLE "sponsorship"."sponsors" ADD COLUMN "name" text;
      CREATE TABLE "sponsorship"."probe_charges" ("sponsorship_id" text COLLATE "C" PRIMARY KEY,
        "client_id" text NOT NULL, "charged_at" timestamptz NOT NULL DEFAULT clock_timestamp());
      CREATE INDEX "probe_charges_window" ON "sponsorship"."probe_charges" ("client_id", "charged_at" DESC);
      CREATE INDEX "seats_by_user" ON "sponsorship"."seats" ("user_id") WHERE "user_id" IS NOT NULL`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "sponsorship"."seats_by_user"; DROP TABLE "sponsorship"."probe_charges";
      ALTER TABLE "sponsorship"."sponsors" DROP COLUMN "name";
      ALTER TABLE "sponsorship"."seats" DROP COLUMN "matched_on_provision"`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The probe budget and the member's view of their sponsorships.
 *
 * `seats.matched_on_provision`: the provision found a crew member with that e-mail (answered
 * `active`). Such a seat closed within 24 h of its provisioning is a probe: it told the partner
 * that the address belongs to a member. `probe_charges` holds one row per such seat, written in the
 * transaction that closes it; a provision counts the partner's rows of the last 24 h. The primary
 * key keeps a seat from being charged twice.
 *
 * `sponsors.name` is the partner's display name as the Basic check last confirmed it, shown to a
 * member on their account page. `seats_by_user` serves that page (the member's seats, any partner).
 */
export class AddProbeBudget1764300000000 implements MigrationInterface {
  name = 'AddProbeBudget1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE "sponsorship"."seats" ADD COLUMN "matched_on_provision" boolean NOT NULL DEFAULT false`,
    );
    await q.query(`ALTER TABLE "sponsorship"."sponsors" ADD COLUMN "name" text`);
    await q.query(`
      CREATE TABLE "sponsorship"."probe_charges" (
        "sponsorship_id" text COLLATE "C" PRIMARY KEY,
        "client_id" text NOT NULL,
        "charged_at" timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await q.query(
      `CREATE INDEX "probe_charges_window" ON "sponsorship"."probe_charges" ("client_id", "charged_at" DESC)`,
    );
    await q.query(
      `CREATE INDEX "seats_by_user" ON "sponsorship"."seats" ("user_id") WHERE "user_id" IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "sponsorship"."seats_by_user"`);
    await q.query(`DROP TABLE "sponsorship"."probe_charges"`);
    await q.query(`ALTER TABLE "sponsorship"."sponsors" DROP COLUMN "name"`);
    await q.query(`ALTER TABLE "sponsorship"."seats" DROP COLUMN "matched_on_provision"`);
  }
}

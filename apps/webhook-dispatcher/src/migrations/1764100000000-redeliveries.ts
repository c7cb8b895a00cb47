import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An operator's redelivery is a delivery of its own (a fresh attempt series, same event and body)
 * that names the delivery it repeats. Uniqueness of (event, partner) now holds for the deliveries
 * the fan-out creates only, so a redelivered event still creates nothing new by itself.
 */
export class Redeliveries1764100000000 implements MigrationInterface {
  name = 'Redeliveries1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE "webhooks"."deliveries"
         ADD COLUMN "redelivery_of" text REFERENCES "webhooks"."deliveries" ("delivery_id") ON DELETE CASCADE`,
    );
    await q.query(`ALTER TABLE "webhooks"."deliveries" DROP CONSTRAINT "deliveries_event_client"`);
    await q.query(
      `CREATE UNIQUE INDEX "deliveries_event_client" ON "webhooks"."deliveries" ("event_id", "client_id")
        WHERE "redelivery_of" IS NULL`,
    );
    await q.query(
      `CREATE INDEX "deliveries_redelivery_of" ON "webhooks"."deliveries" ("redelivery_of")
        WHERE "redelivery_of" IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM "webhooks"."deliveries" WHERE "redelivery_of" IS NOT NULL`);
    await q.query(`DROP INDEX "webhooks"."deliveries_redelivery_of"`);
    await q.query(`DROP INDEX "webhooks"."deliveries_event_client"`);
    await q.query(
      `ALTER TABLE "webhooks"."deliveries"
         ADD CONSTRAINT "deliveries_event_client" UNIQUE ("event_id", "client_id")`,
    );
    await q.query(`ALTER TABLE "webhooks"."deliveries" DROP COLUMN "redelivery_of"`);
  }
}

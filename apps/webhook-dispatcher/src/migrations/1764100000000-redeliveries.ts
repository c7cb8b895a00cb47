import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A redelivery is a delivery naming the one it repeats; only the others are unique per (event, partner). */
export class Redeliveries1764100000000 implements MigrationInterface {
  name = 'Redeliveries1764100000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "webhooks"."deliveries"
        ADD COLUMN "redelivery_of" text REFERENCES "webhooks"."deliveries" ("delivery_id") ON DELETE CASCADE;
      ALTER TABLE "webhooks"."deliveries" DROP CONSTRAINT "deliveries_event_client";
      CREATE UNIQUE INDEX "deliveries_event_client" ON "webhooks"."deliveries" ("event_id", "client_id")
        WHERE "redelivery_of" IS NULL;
      CREATE INDEX "deliveries_redelivery_of" ON "webhooks"."deliveries" ("redelivery_of")
        WHERE "redelivery_of" IS NOT NULL`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM "webhooks"."deliveries" WHERE "redelivery_of" IS NOT NULL;
      DROP INDEX "webhooks"."deliveries_redelivery_of"; DROP INDEX "webhooks"."deliveries_event_client";
      ALTER TABLE "webhooks"."deliveries"
        ADD CONSTRAINT "deliveries_event_client" UNIQUE ("event_id", "client_id");
      ALTER TABLE "webhooks"."deliveries" DROP COLUMN "redelivery_of"`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The transactional outbox of record events (libs/platform OutboxMessageEntity). */
export class CreateOutbox1763740000000 implements MigrationInterface {
  name = 'CreateOutbox1763740000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "crew"."outbox_messages" (
        "id" bigserial PRIMARY KEY,
        "message_id" text NOT NULL UNIQUE,
        "exchange" text NOT NULL,
        "routing_key" text NOT NULL,
        "payload" jsonb NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "published_at" timestamptz,
        "attempts" integer NOT NULL DEFAULT 0,
        "last_error" text
      )`);
    await queryRunner.query(
      `CREATE INDEX "outbox_messages_unpublished" ON "crew"."outbox_messages" ("id") WHERE "published_at" IS NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "crew"."outbox_messages"`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/** What partner portal sessions did to their webhooks (redeliver, replay, enable, test) and the outcome. */
export class PortalActions1765100000001 implements MigrationInterface {
  name = 'PortalActions1765100000001';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "webhooks"."portal_actions" (
        "id" bigserial PRIMARY KEY, "client_id" text NOT NULL, "portal_session" text NOT NULL,
        "action" text NOT NULL CHECK ("action" IN ('redeliver', 'replay', 'enable', 'test')),
        "subject" jsonb NOT NULL DEFAULT '{}', "outcome" text NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX "portal_actions_client_newest" ON "webhooks"."portal_actions"
        ("client_id", "created_at" DESC)`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "webhooks"."portal_actions"`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Portal actions by age, for PortalActionsPruner (PORTAL_ACTIONS_RETENTION_DAYS). */
export class PortalActionsRetention1765400000001 implements MigrationInterface {
  name = 'PortalActionsRetention1765400000001';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX "portal_actions_by_age" ON "webhooks"."portal_actions" ("created_at")`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "webhooks"."portal_actions_by_age"`);
  }
}

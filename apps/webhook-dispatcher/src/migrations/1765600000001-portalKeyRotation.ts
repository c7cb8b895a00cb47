import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The portal's record of actions also holds its signing-key rotations. */
export class PortalKeyRotation1765600000001 implements MigrationInterface {
  name = 'PortalKeyRotation1765600000001';
  async up(q: QueryRunner): Promise<void> {
    await this.allow(q, `'redeliver', 'replay', 'enable', 'test', 'rotate_signing_key'`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM "webhooks"."portal_actions" WHERE "action" = 'rotate_signing_key'`);
    await this.allow(q, `'redeliver', 'replay', 'enable', 'test'`);
  }
  private async allow(q: QueryRunner, actions: string): Promise<void> {
    await q.query(`ALTER TABLE "webhooks"."portal_actions" DROP CONSTRAINT "portal_actions_action_check";
      ALTER TABLE "webhooks"."portal_actions" ADD CONSTRAINT "portal_actions_action_check"
        CHECK ("action" IN (${actions}))`);
  }
}

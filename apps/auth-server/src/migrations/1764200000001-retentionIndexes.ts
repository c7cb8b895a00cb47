import { createOutboxRetentionIndex, dropOutboxRetentionIndex } from '@svc/platform';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The indexes the pruners read: published OAuth events by age (OutboxPruner, after
 * OUTBOX_RETENTION_DAYS) and token pairs by refresh expiry (GrantsPruner; authorization codes
 * already have `authorization_codes_expiry`).
 */
export class RetentionIndexes1764200000001 implements MigrationInterface {
  name = 'RetentionIndexes1764200000001';

  async up(q: QueryRunner): Promise<void> {
    await createOutboxRetentionIndex(q, 'auth');
    await q.query(
      `CREATE INDEX IF NOT EXISTS "token_pairs_refresh_expiry" ON "auth"."token_pairs" ("refresh_expires_at")`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS "auth"."token_pairs_refresh_expiry"`);
    await dropOutboxRetentionIndex(q, 'auth');
  }
}

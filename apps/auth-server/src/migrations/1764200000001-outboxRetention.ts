import { createOutboxRetentionIndex, dropOutboxRetentionIndex } from '@svc/platform';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Published OAuth events are pruned after OUTBOX_RETENTION_DAYS (OutboxPruner). */
export class OutboxRetention1764200000001 implements MigrationInterface {
  name = 'OutboxRetention1764200000001';

  async up(q: QueryRunner): Promise<void> {
    await createOutboxRetentionIndex(q, 'auth');
  }

  async down(q: QueryRunner): Promise<void> {
    await dropOutboxRetentionIndex(q, 'auth');
  }
}

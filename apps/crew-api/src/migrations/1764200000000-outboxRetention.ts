import { createOutboxRetentionIndex, dropOutboxRetentionIndex } from '@svc/platform';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Published record events are pruned after OUTBOX_RETENTION_DAYS (OutboxPruner). */
export class OutboxRetention1764200000000 implements MigrationInterface {
  name = 'OutboxRetention1764200000000';
  async up(q: QueryRunner): Promise<void> {
    await createOutboxRetentionIndex(q, 'crew');
  }
  async down(q: QueryRunner): Promise<void> {
    await dropOutboxRetentionIndex(q, 'crew');
  }
}

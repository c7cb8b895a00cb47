import type { QueryRunner } from 'typeorm';

/**
 * The index OutboxPruner reads (OutboxRepository.prunePublished): published messages by age.
 * Each app with an outbox adds it to its own schema in a migration of its own.
 */
export async function createOutboxRetentionIndex(q: QueryRunner, schema: string): Promise<void> {
  await q.query(
    `CREATE INDEX IF NOT EXISTS "outbox_messages_retention" ON "${schema}"."outbox_messages" ("created_at")
      WHERE "published_at" IS NOT NULL`,
  );
}

export async function dropOutboxRetentionIndex(q: QueryRunner, schema: string): Promise<void> {
  await q.query(`DROP INDEX IF EXISTS "${schema}"."outbox_messages_retention"`);
}

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

/**
 * The outbox's `trace_context` (OutboxMessage.traceContext): nullable, so adding it rewrites no
 * row and rows written before it, or with tracing off, are published as before.
 */
export async function addOutboxTraceContext(q: QueryRunner, schema: string): Promise<void> {
  await q.query(`ALTER TABLE "${schema}"."outbox_messages" ADD COLUMN IF NOT EXISTS "trace_context" text`);
}

export async function dropOutboxTraceContext(q: QueryRunner, schema: string): Promise<void> {
  await q.query(`ALTER TABLE "${schema}"."outbox_messages" DROP COLUMN IF EXISTS "trace_context"`);
}

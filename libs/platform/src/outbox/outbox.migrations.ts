import type { QueryRunner } from 'typeorm';

/**
 * The transactional outbox of an app (OutboxMessage), in that app's schema. Every app with an outbox
 * creates it in its own first migration; the later columns and indexes below are added by later ones.
 */
export async function createOutboxTable(q: QueryRunner, schema: string): Promise<void> {
  await q.query(`
    CREATE TABLE "${schema}"."outbox_messages" (
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
  await q.query(
    `CREATE INDEX "outbox_messages_unpublished" ON "${schema}"."outbox_messages" ("id") WHERE "published_at" IS NULL`,
  );
}

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

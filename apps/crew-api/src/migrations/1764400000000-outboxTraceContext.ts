import { addOutboxTraceContext, dropOutboxTraceContext } from '@svc/platform';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/** An outbox row keeps the trace of the change it announces, for the relay to publish it under. */
export class OutboxTraceContext1764400000000 implements MigrationInterface {
  name = 'OutboxTraceContext1764400000000';
  async up(q: QueryRunner): Promise<void> {
    await addOutboxTraceContext(q, 'crew');
  }
  async down(q: QueryRunner): Promise<void> {
    await dropOutboxTraceContext(q, 'crew');
  }
}

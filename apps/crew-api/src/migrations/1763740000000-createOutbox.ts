import { createOutboxTable } from '@svc/platform';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The transactional outbox of record events. */
export class CreateOutbox1763740000000 implements MigrationInterface {
  name = 'CreateOutbox1763740000000';
  async up(q: QueryRunner): Promise<void> {
    await createOutboxTable(q, 'crew');
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "crew"."outbox_messages"`);
  }
}

import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { eventually, testServices } from '../support/services';
import { dataSourceOptions } from '../../libs/platform/src/database/database.module';
import { createLogger } from '../../libs/platform/src/logging/logger';
import { Sql } from '../../libs/platform/src/database/sql';
import { OutboxPruner } from '../../libs/platform/src/outbox/outbox-pruner';
import { OutboxRepository } from '../../libs/platform/src/outbox/outbox.repository';

/**
 * Outbox retention against real PostgreSQL (crew-api's schema, migrated as the app migrates it):
 * published messages past the retention go, everything else stays. The rows of each test carry
 * their own routing key, so other suites' rows in the shared table are never counted.
 */
const services = testServices();
const logger = createLogger('outbox-pruner-test', 'silent');
let dataSource: DataSource;
let routingKey: string;

beforeAll(async () => {
  dataSource = new DataSource(
    dataSourceOptions(
      'outbox-pruner-test',
      { DATABASE_URL: services.databaseUrl, DATABASE_POOL_SIZE: 4 },
      { schema: 'crew', migrations: [] },
    ),
  );
  await dataSource.initialize();
});

afterAll(async () => {
  await dataSource.destroy();
});

beforeEach(() => {
  routingKey = `test.pruner.${randomBytes(6).toString('hex')}`;
});

afterEach(async () => {
  await dataSource.query('DELETE FROM crew.outbox_messages WHERE routing_key = $1', [routingKey]);
});

/** `count` messages of this test, created `ageDays` ago, published or not. */
async function insert(count: number, ageDays: number, published: boolean): Promise<void> {
  await dataSource.query(
    `INSERT INTO crew.outbox_messages (message_id, exchange, routing_key, payload, created_at, published_at)
     SELECT $1 || '-' || n, 'crew.events', $2, '{}'::jsonb,
            now() - make_interval(days => $3), CASE WHEN $4 THEN now() - make_interval(days => $3) END
       FROM generate_series(1, $5) AS n`,
    [`${routingKey}-${ageDays}-${published}`, routingKey, ageDays, published, count],
  );
}

async function remaining(): Promise<{ age: number; published: boolean; n: number }[]> {
  return dataSource.query(
    `SELECT round(extract(epoch FROM now() - created_at) / 86400)::int AS age,
            published_at IS NOT NULL AS published, count(*)::int AS n
       FROM crew.outbox_messages WHERE routing_key = $1
      GROUP BY 1, 2 ORDER BY 1, 2`,
    [routingKey],
  );
}

function pruner(retentionDays: number, batchSize = 1000, everyMs?: number): OutboxPruner {
  return new OutboxPruner(new OutboxRepository(new Sql(dataSource, 'outbox-pruner-test')), logger, {
    retentionDays,
    batchSize,
    everyMs,
  });
}

describe('OutboxPruner', () => {
  it('deletes published messages past the retention in batches and keeps the rest', async () => {
    await insert(25, 8, true);
    await insert(3, 6, true);
    await insert(4, 30, false);
    await insert(2, 0, true);

    // A batch of 10 needs three batches for the 25 old published messages (the last one short).
    const deleted = await pruner(7, 10).pruneOnce();

    expect(deleted).toBe(25);
    expect(await remaining()).toEqual([
      { age: 0, published: true, n: 2 },
      { age: 6, published: true, n: 3 },
      // Never published: kept however old, until the relay gets it to the broker.
      { age: 30, published: false, n: 4 },
    ]);
  });

  it('keeps everything when the retention is 0', async () => {
    await insert(5, 400, true);
    expect(await pruner(0).pruneOnce()).toBe(0);
    expect(await remaining()).toEqual([{ age: 400, published: true, n: 5 }]);
  });

  it('lets replicas prune side by side, each message deleted once', async () => {
    await insert(300, 10, true);
    const counts = await Promise.all([pruner(7, 20).pruneOnce(), pruner(7, 20).pruneOnce()]);
    expect(counts[0] + counts[1]).toBe(300);
    expect(await remaining()).toEqual([]);
  });

  it('prunes on its own once started, and stops when told', async () => {
    await insert(5, 9, true);
    const running = pruner(7, 1000, 50);
    running.onApplicationBootstrap();
    try {
      await eventually(async () => ((await remaining()).length === 0 ? true : undefined));
    } finally {
      await running.beforeApplicationShutdown();
    }
    await insert(5, 9, true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await remaining()).toEqual([{ age: 9, published: true, n: 5 }]);
  });

  it('reads old published messages through the retention index of both outboxes', async () => {
    for (const schema of ['crew', 'auth']) {
      const [index] = await dataSource.query<{ indexdef: string }[]>(
        `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'outbox_messages_retention'`,
        [schema],
      );
      expect(index?.indexdef).toMatch(/\(created_at\) WHERE \(published_at IS NOT NULL\)/);
    }
    const runner = dataSource.createQueryRunner();
    try {
      await runner.query('SET enable_seqscan = off');
      const plan = (await runner.query(
        `EXPLAIN SELECT id FROM outbox_messages
          WHERE published_at IS NOT NULL AND created_at < now() - make_interval(days => 7)
          ORDER BY created_at LIMIT 1000`,
      )) as { 'QUERY PLAN': string }[];
      expect(plan.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/outbox_messages_retention/);
    } finally {
      await runner.release();
    }
  });
});

import { randomBytes } from 'node:crypto';
import { dataSourceOptions, Sql, TransactionRunner } from '@svc/platform';
import { DataSource } from 'typeorm';
import { DeliveriesRepository } from '../../apps/webhook-dispatcher/src/deliveries/deliveries.repository';
import { PartnerWebhooksRepository } from '../../apps/webhook-dispatcher/src/partner-webhooks/partner-webhooks.repository';
import { testServices } from '../support/services';

/**
 * The dispatcher's per-hour rows against real PostgreSQL: the endpoints' hourly attempt counts
 * (webhook_endpoint_hours), whose hours older than the 25 the endpoint health reads the delivery
 * log pruner forgets, and the replay and redelivery budgets' calls (webhook_replays), which each
 * budgeted call of the partner trims to the last hour. Rows belong to partners of this test alone.
 */
const services = testServices();
let dataSource: DataSource;
let deliveries: DeliveriesRepository;

beforeAll(async () => {
  dataSource = new DataSource(
    dataSourceOptions(
      'endpoint-hours-retention-test',
      { DATABASE_URL: services.databaseUrl, DATABASE_POOL_SIZE: 2 },
      { schema: 'webhooks', migrations: [] },
    ),
  );
  await dataSource.initialize();
  deliveries = new DeliveriesRepository(new Sql(dataSource, 'endpoint-hours-retention-test'), {
    WEBHOOK_DISABLE_AFTER: 5 * 86_400_000,
  });
});

afterAll(async () => {
  await dataSource.destroy();
});

it('forgets hours older than 25 and keeps the hours the health reads', async () => {
  const partner = `par_hours_${randomBytes(5).toString('hex')}`;
  await dataSource.query(
    `INSERT INTO webhooks.webhook_endpoint_hours (client_id, hour, attempts, successes)
     SELECT $1, date_trunc('hour', now()) - make_interval(hours => h), 3, 2 FROM unnest($2::int[]) AS h`,
    [partner, [0, 1, 23, 24, 26, 30, 24 * 7]],
  );

  expect(await deliveries.pruneEndpointHours()).toBeGreaterThanOrEqual(3);

  const rows = (await dataSource.query(
    `SELECT round(extract(epoch FROM date_trunc('hour', now()) - hour) / 3600)::int AS ago
       FROM webhooks.webhook_endpoint_hours WHERE client_id = $1 ORDER BY hour DESC`,
    [partner],
  )) as { ago: number }[];
  expect(rows.map((r) => r.ago)).toEqual([0, 1, 23, 24]);
  await dataSource.query('DELETE FROM webhooks.webhook_endpoint_hours WHERE client_id = $1', [partner]);
});

it('a replay budget keeps only the last hour of the partner’s calls, dropping the older ones as it counts', async () => {
  const partner = `par_replays_${randomBytes(5).toString('hex')}`;
  const budgets = new PartnerWebhooksRepository(
    new Sql(dataSource, 'endpoint-hours-retention-test'),
    new TransactionRunner(dataSource),
  );
  await dataSource.query(
    `INSERT INTO webhooks.webhook_replays (client_id, replayed_at, replayed_count, kind)
     SELECT $1, now() - make_interval(mins => m), 0, 'replay' FROM unnest($2::int[]) AS m`,
    [partner, [10, 61, 120, 60 * 24 * 30]],
  );

  const since = new Date(Date.now() - 3600_000);
  const outcome = await budgets.replay(
    partner,
    { since, until: new Date(), status: 'delivered' },
    { perHour: 10, max: 100 },
  );
  expect(outcome.retryAfterSeconds).toBeUndefined();

  const rows = (await dataSource.query(
    `SELECT round(extract(epoch FROM now() - replayed_at) / 60)::int AS ago
       FROM webhooks.webhook_replays WHERE client_id = $1 ORDER BY replayed_at DESC`,
    [partner],
  )) as { ago: number }[];
  expect(rows.map((r) => r.ago)).toEqual([0, 10]);
  await dataSource.query('DELETE FROM webhooks.webhook_replays WHERE client_id = $1', [partner]);
});

import { randomBytes } from 'node:crypto';
import { dataSourceOptions, Sql } from '@svc/platform';
import { DataSource } from 'typeorm';
import { DeliveriesRepository } from '../../apps/webhook-dispatcher/src/deliveries/deliveries.repository';
import { testServices } from '../support/services';

/**
 * Delivery log retention against real PostgreSQL (the dispatcher's schema as its migrations
 * leave it): finished deliveries past the retention go with their attempts; pending ones, young
 * ones and those whose redelivery is still running stay. Rows carry this test's own ids.
 */
const services = testServices();
let dataSource: DataSource;
let deliveries: DeliveriesRepository;
let run: string;

beforeAll(async () => {
  dataSource = new DataSource(
    dataSourceOptions(
      'delivery-log-retention-test',
      { DATABASE_URL: services.databaseUrl, DATABASE_POOL_SIZE: 4 },
      { schema: 'webhooks', migrations: [] },
    ),
  );
  await dataSource.initialize();
  deliveries = new DeliveriesRepository(new Sql(dataSource, 'delivery-log-retention-test'), {
    WEBHOOK_DISABLE_AFTER: 5 * 86_400_000,
  });
});

afterAll(async () => {
  await dataSource.destroy();
});

beforeEach(() => {
  run = `dlr_${randomBytes(5).toString('hex')}`;
});

afterEach(async () => {
  await dataSource.query('DELETE FROM webhooks.deliveries WHERE delivery_id LIKE $1', [`${run}%`]);
});

/** A delivery of this test, `ageDays` old, with one attempt logged. */
async function delivery(
  name: string,
  status: 'pending' | 'delivered' | 'failed',
  ageDays: number,
  redeliveryOf?: string,
): Promise<void> {
  const id = `${run}_${name}`;
  await dataSource.query(
    `INSERT INTO webhooks.deliveries
       (delivery_id, event_id, event_type, user_id, client_id, target_url, body, status, attempts,
        created_at, redelivery_of)
     VALUES ($1, $2, 'user.profile.updated', 'usr_x', 'partner_x', 'https://partner.example/hook', '{}',
             $3, 1, now() - make_interval(days => $4), $5)`,
    [id, `evt_${id}`, status, ageDays, redeliveryOf ? `${run}_${redeliveryOf}` : null],
  );
  await dataSource.query(
    `INSERT INTO webhooks.delivery_attempts (delivery_id, attempt, started_at, duration_ms, status_code)
     VALUES ($1, 1, now() - make_interval(days => $2), 12, 200)`,
    [id, ageDays],
  );
}

async function remaining(): Promise<string[]> {
  const rows = (await dataSource.query(
    `SELECT delivery_id FROM webhooks.deliveries WHERE delivery_id LIKE $1 ORDER BY delivery_id`,
    [`${run}%`],
  )) as { delivery_id: string }[];
  return rows.map((r) => r.delivery_id.slice(run.length + 1));
}

async function attemptsLeft(): Promise<number> {
  const [row] = (await dataSource.query(
    `SELECT count(*)::int AS n FROM webhooks.delivery_attempts WHERE delivery_id LIKE $1`,
    [`${run}%`],
  )) as { n: number }[];
  return row.n;
}

describe('delivery log retention', () => {
  it('deletes finished deliveries past the retention with their attempts, in batches', async () => {
    for (let i = 0; i < 7; i += 1) await delivery(`old_delivered_${i}`, 'delivered', 40);
    await delivery('old_failed', 'failed', 31);
    await delivery('old_pending', 'pending', 45);
    await delivery('young_delivered', 'delivered', 29);

    let total = 0;
    for (;;) {
      const deleted = await deliveries.pruneFinished(30, 3);
      total += deleted;
      if (deleted < 3) break;
    }

    expect(total).toBe(8);
    expect(await remaining()).toEqual(['old_pending', 'young_delivered']);
    expect(await attemptsLeft()).toBe(2);
  });

  it('keeps an old delivery while its redelivery is pending or young, and prunes both once they are old', async () => {
    await delivery('original_a', 'failed', 40);
    await delivery('redelivery_a', 'pending', 40, 'original_a');
    await delivery('original_b', 'failed', 40);
    await delivery('redelivery_b', 'delivered', 2, 'original_b');
    await delivery('original_c', 'failed', 50);
    await delivery('redelivery_c', 'delivered', 35, 'original_c');

    await deliveries.pruneFinished(30, 1000);

    expect(await remaining()).toEqual(['original_a', 'original_b', 'redelivery_a', 'redelivery_b']);
  });
});

import { randomBytes } from 'node:crypto';
import { dataSourceOptions, PRUNE_BATCH, type RetentionJob, Sql } from '@svc/platform';
import pino from 'pino';
import { DataSource } from 'typeorm';
import { DeliveriesRepository } from '../../apps/webhook-dispatcher/src/deliveries/deliveries.repository';
import { PartnerPortalRepository } from '../../apps/webhook-dispatcher/src/partner-portal/partner-portal.repository';
import { dispatcherRetention } from '../../apps/webhook-dispatcher/src/retention/retention.module';
import { testServices } from '../support/services';

/**
 * Retention of the portal's record of actions against real PostgreSQL (the dispatcher's schema as
 * its migrations leave it): actions older than PORTAL_ACTIONS_RETENTION_DAYS go, in batches,
 * younger ones stay. Rows are written as the portal writes them, for partners of this test alone.
 */
const services = testServices();
const RETENTION_DAYS = 30;
let dataSource: DataSource;
let portal: PartnerPortalRepository;
let retention: RetentionJob<'deliveries' | 'endpoint_hours' | 'portal_actions'>;
let partner: string;

beforeAll(async () => {
  dataSource = new DataSource(
    dataSourceOptions(
      'portal-actions-retention-test',
      { DATABASE_URL: services.databaseUrl, DATABASE_POOL_SIZE: 4 },
      { schema: 'webhooks', migrations: [] },
    ),
  );
  await dataSource.initialize();
  const sql = new Sql(dataSource, 'portal-actions-retention-test');
  portal = new PartnerPortalRepository(sql);
  retention = dispatcherRetention(
    new DeliveriesRepository(sql, { WEBHOOK_DISABLE_AFTER: 5 * 86_400_000 }),
    portal,
    { WEBHOOK_LOG_RETENTION_DAYS: 0, PORTAL_ACTIONS_RETENTION_DAYS: RETENTION_DAYS },
    pino({ level: 'silent' }),
  );
});

afterAll(async () => {
  await dataSource.query('DELETE FROM webhooks.portal_actions WHERE client_id LIKE $1', ['par_retention_%']);
  await dataSource.destroy();
});

beforeEach(() => {
  partner = `par_retention_${randomBytes(5).toString('hex')}`;
});

/** `count` actions of this test's partner, as the portal records them, then `ageDays` old. */
async function actions(count: number, ageDays: number, outcome = 'ok'): Promise<void> {
  const session = `pps_${randomBytes(8).toString('hex')}`;
  for (let i = 0; i < count; i += 1) {
    await portal.record({
      clientId: partner,
      portalSession: session,
      action: 'test',
      subject: {},
      outcome,
    });
  }
  await dataSource.query(
    `UPDATE webhooks.portal_actions SET created_at = now() - make_interval(days => $2)
      WHERE client_id = $1 AND portal_session = $3`,
    [partner, ageDays, session],
  );
}

async function ages(): Promise<number[]> {
  const rows = (await dataSource.query(
    `SELECT round(extract(epoch FROM now() - created_at) / 86400)::int AS days
       FROM webhooks.portal_actions WHERE client_id = $1 ORDER BY created_at`,
    [partner],
  )) as { days: number }[];
  return rows.map((r) => r.days);
}

describe('portal actions retention', () => {
  it('deletes actions past the retention, refusals included, and keeps younger ones', async () => {
    await actions(3, RETENTION_DAYS + 10);
    await actions(2, RETENTION_DAYS + 1, 'rate_limit_exceeded');
    await actions(2, RETENTION_DAYS - 1);
    await actions(1, 0, 'conflict');

    expect((await retention.pruneOnce()).portal_actions).toBeGreaterThanOrEqual(5);

    expect(await ages()).toEqual([RETENTION_DAYS - 1, RETENTION_DAYS - 1, 0]);
    expect((await retention.pruneOnce()).portal_actions).toBe(0);
  });

  it('works through more than one batch in a pass', async () => {
    // Written in one statement: a batch and a half of old actions.
    await dataSource.query(
      `INSERT INTO webhooks.portal_actions (client_id, portal_session, action, outcome, created_at)
       SELECT $1, 'pps_bulk', 'redeliver', 'ok', now() - make_interval(days => $2) FROM generate_series(1, $3)`,
      [partner, RETENTION_DAYS + 2, PRUNE_BATCH + PRUNE_BATCH / 2],
    );
    await actions(1, 1);

    expect((await retention.pruneOnce()).portal_actions).toBeGreaterThanOrEqual(
      PRUNE_BATCH + PRUNE_BATCH / 2,
    );
    expect(await ages()).toEqual([1]);
  });
});

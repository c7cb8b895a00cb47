import { APP_SCHEMAS } from '@svc/contracts';
import { dataSourceOptions, Sql, TransactionRunner } from '@svc/platform';
import type { Logger } from 'pino';
import { DataSource } from 'typeorm';
import type { CrewApiConfig } from '../config';
import { CREW_API_MIGRATIONS } from '../migrations';
import { sandboxRecords } from './sandbox-records';
import { SeedRepository } from './seed.repository';

/**
 * The sandbox crew records of docs/rules.md (`cli.js seed`, sandbox only). Idempotent: a member
 * already there is left untouched, so seeding on every start never doubles nor resets a record.
 */
export async function seedSandbox(config: CrewApiConfig, logger: Logger): Promise<void> {
  const dataSource = new DataSource(
    dataSourceOptions(
      'crew-api',
      { DATABASE_URL: config.DATABASE_URL, DATABASE_POOL_SIZE: 2 },
      { schema: APP_SCHEMAS['crew-api'], migrations: CREW_API_MIGRATIONS },
    ),
  );
  await dataSource.initialize();
  try {
    const repository = new SeedRepository(new TransactionRunner(dataSource), new Sql(dataSource, 'crew-api'));
    const seeded: string[] = [];
    for (const m of sandboxRecords(new Date())) {
      if (await repository.seedMember(m)) seeded.push(m.email);
    }
    logger.info({ seeded }, seeded.length ? 'crew-api: sandbox seeded' : 'crew-api: sandbox already seeded');
  } finally {
    await dataSource.destroy();
  }
}

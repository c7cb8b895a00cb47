import { APP_SCHEMAS } from '@svc/contracts';
import { Sql, TransactionRunner, withDataSource } from '@svc/platform';
import type { Logger } from 'pino';
import type { CrewApiConfig } from '../config';
import { CREW_API_MIGRATIONS } from '../migrations';
import { sandboxRecords } from './sandbox-records';
import { SeedRepository } from './seed.repository';

/** The sandbox crew records of docs/rules.md (`cli.js seed`); an existing member is left untouched. */
export async function seedSandbox(config: CrewApiConfig, logger: Logger): Promise<void> {
  const db = { DATABASE_URL: config.DATABASE_URL, DATABASE_POOL_SIZE: 2 };
  const options = { schema: APP_SCHEMAS['crew-api'], migrations: CREW_API_MIGRATIONS };
  const seeded = await withDataSource('crew-api', db, options, async (dataSource) => {
    const repository = new SeedRepository(new TransactionRunner(dataSource), new Sql(dataSource, 'crew-api'));
    const emails: string[] = [];
    for (const m of sandboxRecords(new Date())) {
      if (await repository.seedMember(m)) emails.push(m.email);
    }
    return emails;
  });
  logger.info({ seeded }, seeded.length ? 'crew-api: sandbox seeded' : 'crew-api: sandbox already seeded');
}

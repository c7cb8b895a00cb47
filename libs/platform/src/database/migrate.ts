import { DataSource } from 'typeorm';
import type { Logger } from 'pino';
import { dataSourceOptions, type DatabaseConfig, type DatabaseOptions } from './database.module';

/**
 * Runs an app's pending migrations inside its own schema. An advisory lock keyed on the schema
 * makes concurrent runs (two Jobs, a Job and a developer) wait for each other instead of racing.
 */
export async function runMigrations(
  app: string,
  config: DatabaseConfig,
  options: DatabaseOptions,
  logger: Logger,
  direction: 'up' | 'down' = 'up',
): Promise<void> {
  // No statement budget: building an index on a large table may take minutes.
  const dataSource = new DataSource(dataSourceOptions(app, config, options, 0));
  await dataSource.initialize();
  const runner = dataSource.createQueryRunner();
  try {
    await runner.connect();
    await runner.query('SELECT pg_advisory_lock(hashtext($1))', [`migrations:${options.schema}`]);
    await runner.query(`CREATE SCHEMA IF NOT EXISTS "${options.schema}"`);
    if (direction === 'up') {
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      logger.info(
        { schema: options.schema, applied: applied.map((m) => m.name) },
        `${app}: migrations up to date`,
      );
    } else {
      await dataSource.undoLastMigration({ transaction: 'each' });
      logger.info({ schema: options.schema }, `${app}: last migration reverted`);
    }
  } finally {
    await runner
      .query('SELECT pg_advisory_unlock(hashtext($1))', [`migrations:${options.schema}`])
      .catch(() => undefined);
    await runner.release();
    await dataSource.destroy();
  }
}

import type { Logger } from 'pino';
import { withDataSource, type DatabaseConfig, type DatabaseOptions } from './database.module';

/**
 * Runs an app's pending migrations inside its own schema. An advisory lock keyed on the schema
 * makes concurrent runs (two Jobs, a Job and a developer) wait for each other instead of racing.
 */
export async function runMigrations(
  app: string,
  config: DatabaseConfig & { readonly DATABASE_APP_ROLE?: string },
  options: DatabaseOptions,
  logger: Logger,
  direction: 'up' | 'down' = 'up',
): Promise<void> {
  // No statement budget: building an index on a large table may take minutes.
  await withDataSource(
    app,
    config,
    options,
    async (dataSource) => {
      const runner = dataSource.createQueryRunner();
      const lock = [`migrations:${options.schema}`];
      try {
        await runner.connect();
        await runner.query('SELECT pg_advisory_lock(hashtext($1))', lock);
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
        if (config.DATABASE_APP_ROLE) {
          await runner.query(schemaGrants(options.schema, config.DATABASE_APP_ROLE));
          logger.info(
            { schema: options.schema, role: config.DATABASE_APP_ROLE },
            `${app}: role granted its schema`,
          );
        }
      } finally {
        await runner.query('SELECT pg_advisory_unlock(hashtext($1))', lock).catch(() => undefined);
        await runner.release();
      }
    },
    0,
  );
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * What the serving app's login role may do: read and write the rows of its own schema, nothing
 * else. The migrations' role keeps ownership (DDL), the role gets no USAGE on any other app's
 * schema, and the default privileges extend the grant to tables later migrations create. The
 * migrations table is read-only to it (Kubernetes' wait-for-migrations reads it as the app): a
 * serving app never rewrites which migrations ran.
 */
export function schemaGrants(schema: string, role: string): string {
  const s = ident(schema);
  const r = ident(role);
  return [
    `GRANT USAGE ON SCHEMA ${s} TO ${r}`,
    `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${s} TO ${r}`,
    `GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA ${s} TO ${r}`,
    `REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON TABLE ${s}."migrations" FROM ${r}`,
    `ALTER DEFAULT PRIVILEGES IN SCHEMA ${s} GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ${r}`,
    `ALTER DEFAULT PRIVILEGES IN SCHEMA ${s} GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO ${r}`,
  ].join('; ');
}

import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions, type MixedList } from 'typeorm';
import type { ConfigOf, DATABASE_CONFIG } from '../config/config';
import { ReadinessRegistry } from '../health/readiness';
import { TransactionRunner } from './transaction-runner';
import { Sql } from './sql';
import { APP_CONFIG, APP_NAME } from '../platform.module';

export type DatabaseConfig = ConfigOf<typeof DATABASE_CONFIG>;

export interface DatabaseOptions {
  /** The PostgreSQL schema this app owns. */
  readonly schema: string;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  readonly migrations: MixedList<Function | string>;
}

/**
 * Serving apps answer within seconds or not at all: a statement that runs past the budget is
 * cancelled and the request answered 503. Migrations (the CLI) pass `statementTimeoutMs: 0`.
 */
export const SERVING_STATEMENT_TIMEOUT_MS = 3000;

export function dataSourceOptions(
  app: string,
  config: DatabaseConfig,
  options: DatabaseOptions,
  statementTimeoutMs = SERVING_STATEMENT_TIMEOUT_MS,
): DataSourceOptions {
  return {
    type: 'postgres',
    url: config.DATABASE_URL,
    schema: options.schema,
    entities: [],
    migrations: options.migrations,
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
    logging: false,
    applicationName: app,
    extra: {
      max: config.DATABASE_POOL_SIZE,
      // Fail fast instead of queueing requests behind a database that does not answer.
      connectionTimeoutMillis: 2000,
      // The client-side timeout backs up the server's, for a database that stopped answering at all.
      query_timeout: statementTimeoutMs === 0 ? undefined : statementTimeoutMs + 1000,
      options: `-c search_path=${options.schema},public -c statement_timeout=${statementTimeoutMs} -c lock_timeout=${statementTimeoutMs === 0 ? 0 : 2000}`,
    },
  };
}

/** A short-lived pool for one CLI command (migrations, the sandbox seed), closed when `use` ends. */
export async function withDataSource<T>(
  app: string,
  config: DatabaseConfig,
  options: DatabaseOptions,
  use: (dataSource: DataSource) => Promise<T>,
  statementTimeoutMs?: number,
): Promise<T> {
  const dataSource = new DataSource(dataSourceOptions(app, config, options, statementTimeoutMs));
  await dataSource.initialize();
  try {
    return await use(dataSource);
  } finally {
    await dataSource.destroy();
  }
}

/**
 * One pool per process, confined to the app's schema. Migrations are run by the app's CLI (a
 * Kubernetes Job in production), never by `synchronize`, and never on boot of a serving replica.
 */
@Module({})
export class DatabaseModule {
  static forRoot(options: DatabaseOptions): DynamicModule {
    return {
      module: DatabaseModule,
      global: true,
      imports: [
        TypeOrmModule.forRootAsync({
          inject: [APP_NAME, APP_CONFIG],
          useFactory: (app: string, config: DatabaseConfig) => ({
            ...dataSourceOptions(app, config, options),
            retryAttempts: 10,
            retryDelay: 1000,
          }),
        }),
      ],
      providers: [
        {
          provide: 'DATABASE_READINESS',
          inject: [DataSource, ReadinessRegistry],
          useFactory: (ds: DataSource, readiness: ReadinessRegistry) =>
            readiness.register('postgres', async () => {
              await ds.query('SELECT 1');
            }),
        },
        TransactionRunner,
        Sql,
      ],
      exports: [TransactionRunner, Sql],
    };
  }
}

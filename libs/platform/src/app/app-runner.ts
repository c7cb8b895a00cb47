import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { DynamicModule, ModuleMetadata } from '@nestjs/common';
import type { Logger } from 'pino';
import { loadConfigOrExit } from '../config/env';
import {
  BASE_CONFIG,
  DATABASE_CONFIG,
  int,
  MIGRATION_CONFIG,
  type ConfigOf,
  type ConfigSpec,
} from '../config/config';
import { DatabaseModule, type DatabaseOptions } from '../database/database.module';
import { runMigrations } from '../database/migrate';
import { createHttpApp, runHttpApp, type HttpAppOptions } from '../http/bootstrap';
import type { DomainErrorMapper } from '../http/problem-response';
import type { ErrorRenderer } from '../http/problem-details.filter';
import { RouteIndex } from '../http/route-index';
import { createLogger } from '../logging/logger';
import { MessagingModule } from '../messaging/messaging.module';
import { PlatformModule, type PlatformOptions } from '../platform.module';
import { RedisModule } from '../redis/redis.module';
import { RpcModule } from '../rpc/rpc.module';
import { connectRpcServer } from '../rpc/rpc-server';
import { startTracing } from '../tracing/tracing';

type BaseConfig = ConfigOf<typeof BASE_CONFIG>;

/** Everything that differs between the apps; the way they start, stop and migrate does not. */
export interface AppDefinition<S extends ConfigSpec> {
  readonly name: string;
  readonly config: S;
  /** The root module's class; `modules` are its imports after the platform's infrastructure. */
  readonly module: DynamicModule['module'];
  readonly modules: NonNullable<ModuleMetadata['imports']>;
  readonly database: DatabaseOptions;
  readonly redis?: boolean;
  /** The queue of this app's `@MessagePattern` handlers, when it answers RPC. */
  readonly rpcQueue?: string;
  readonly formBodies?: boolean;
  readonly mapDomainError?: DomainErrorMapper;
  readonly renderError?: ErrorRenderer;
  /** Extra CLI commands (`cli.js <name> ...args`), e.g. partner onboarding; they get the app's config. */
  readonly commands?: Readonly<
    Record<string, (args: readonly string[], config: ConfigOf<S>, logger: Logger) => Promise<void>>
  >;
  /** Sandbox data; must be idempotent. Never called in production. */
  readonly seed?: (config: ConfigOf<S>, logger: Logger) => Promise<void>;
}

/** The app's root module: the infrastructure first, in the order Nest initialises it, then the app's own. */
export function rootModule<S extends ConfigSpec>(
  definition: AppDefinition<S>,
  platform: PlatformOptions,
): DynamicModule {
  return {
    module: definition.module,
    imports: [
      PlatformModule.forRoot(platform),
      DatabaseModule.forRoot(definition.database),
      ...(definition.redis ? [RedisModule.forRoot()] : []),
      MessagingModule.forRoot(),
      RpcModule,
      ...definition.modules,
    ],
  };
}

/** The app as `serveApp` builds it before it listens (and the tests boot it), with its RPC server unless `answerRpc` is false. */
export async function buildApp<S extends ConfigSpec>(
  definition: AppDefinition<S>,
  config: ConfigOf<S>,
  logger: Logger,
  answerRpc = true,
): Promise<{ app: NestFastifyApplication; httpOptions: HttpAppOptions }> {
  const base = config as unknown as BaseConfig & { AMQP_PREFETCH?: number };
  const routes = new RouteIndex();
  const httpOptions = { ...definition, app: definition.name, logger, routes, config: base };
  const app = await createHttpApp(
    rootModule(definition, { app: definition.name, config, logger, routes }),
    httpOptions,
  );
  if (answerRpc && definition.rpcQueue && base.AMQP_PREFETCH) {
    connectRpcServer(app, { AMQP_PREFETCH: base.AMQP_PREFETCH }, definition.rpcQueue);
  }
  return { app, httpOptions };
}

export async function serveApp<S extends ConfigSpec>(definition: AppDefinition<S>): Promise<void> {
  const config = loadConfigOrExit(definition.name, definition.config);
  const base = config as unknown as BaseConfig & { AMQP_PREFETCH?: number };
  const logger = createLogger(definition.name, base.LOG_LEVEL);
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled promise rejection'));
  try {
    await startTracing(definition.name, base);
    const { app, httpOptions } = await buildApp(definition, config, logger);
    await runHttpApp(app, httpOptions);
  } catch (err) {
    logger.fatal({ err }, `${definition.name} failed to start`);
    process.exit(1);
  }
}

const CLI_USAGE = 'usage: cli.js migrate | migrate:revert | seed';

/** `cli.js migrate|migrate:revert|seed`: what the migrations Job and `npm start` run before serving. */
export async function runAppCli<S extends ConfigSpec>(
  definition: AppDefinition<S>,
  argv: readonly string[],
): Promise<void> {
  const command = argv[0];
  const spec = {
    APP_ENV: BASE_CONFIG.APP_ENV,
    LOG_LEVEL: BASE_CONFIG.LOG_LEVEL,
    ...DATABASE_CONFIG,
    ...MIGRATION_CONFIG,
  };
  // Seeding may need any of the app's settings; migrating needs only the database.
  const seedSpec = {
    ...definition.config,
    ...MIGRATION_CONFIG,
    PORT: int('not used by the CLI', { default: '0', min: 0 }),
    // A command serves no metrics: run inside an app's pod, it would find the app's port taken.
    METRICS_PORT: { description: 'not used by the CLI', parse: (): undefined => undefined },
  };
  const custom = definition.commands?.[command];
  const needsAll = command === 'seed' || custom !== undefined;
  const config = loadConfigOrExit(definition.name, needsAll ? seedSpec : spec) as ConfigOf<typeof spec>;
  const logger = createLogger(definition.name, config.LOG_LEVEL);
  try {
    switch (command) {
      case 'migrate':
      case 'migrate:revert':
        await runMigrations(
          definition.name,
          config,
          definition.database,
          logger,
          command === 'migrate' ? 'up' : 'down',
        );
        return;
      case 'seed':
        if (config.APP_ENV !== 'sandbox') {
          logger.info('not a sandbox: nothing is seeded');
          return;
        }
        if (definition.seed) await definition.seed(config as unknown as ConfigOf<S>, logger);
        else logger.info(`${definition.name} has no sandbox data`);
        return;
      default:
        if (custom) {
          await custom(argv.slice(1), config as unknown as ConfigOf<S>, logger);
          return;
        }
        process.stderr.write(`${[CLI_USAGE, ...Object.keys(definition.commands ?? {})].join(' | ')}\n`);
        process.exitCode = 64;
    }
  } catch (err) {
    logger.fatal({ err }, `${definition.name} ${command} failed`);
    process.exitCode = 1;
  }
}

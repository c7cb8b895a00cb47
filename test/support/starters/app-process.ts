import fs from 'node:fs';
import path from 'node:path';
import type { NestAppName } from '@svc/contracts';
import { buildApp, createLogger, loadConfig, type AppDefinition, type ConfigSpec } from '@svc/platform';
import { assertBuilt, mainJs, ROOT } from '../../../scripts/lib/apps.cjs';
import { freePorts, waitForHttpOk } from '../../../scripts/lib/net.cjs';
import { startProcess, tail } from '../../../scripts/lib/procs.cjs';
import { Pool } from 'pg';
import { appBrokerUrl } from '../../../scripts/lib/credentials.cjs';
import { testServices } from '../services';

/** PUBLIC_BASE_URL of every app in the integration tier: the issuer (RFC 8414) of auth-server. */
export const ISSUER = 'http://oauth-it.localhost:8080';
export const INTERNAL_TOKEN = 'crew-it-internal-token';

const RESOURCE_APP = {
  RPC_TIMEOUT_MS: '5000',
  // The run's Redis holds every spec's buckets (rate-limit specs included): specs that are not
  // about rate limits keep the limits out of their way.
  RATE_LIMIT_PER_MINUTE: '100000',
  RATE_LIMIT_PER_DAY: '1000000',
};

/** What each app gets in the tests beyond this run's services. */
const APP_SETTINGS: Record<NestAppName, Record<string, string>> = {
  // scrypt at 2^14 as in the test system (test/support/system.ts); production's 2^17 is for members.
  'auth-server': { PASSWORD_HASH_COST: process.env.PASSWORD_HASH_COST || '14' },
  'consent-ui': { RPC_TIMEOUT_MS: '10000' },
  'crew-api': { ...RESOURCE_APP, INTERNAL_API_TOKEN: INTERNAL_TOKEN },
  // The tests run the seat-expiry job themselves (runOnce).
  'sponsorship-api': { ...RESOURCE_APP, SEAT_EXPIRY_INTERVAL: '0s' },
  'webhook-dispatcher': { RPC_TIMEOUT_MS: '5000' },
};

/**
 * An app's environment in the tests: this run's services, the issuer, the app's settings above,
 * `env` last, and AMQP_URL (the run's vhost, or the one `env` names) as the app's own broker user.
 */
export function testAppEnv(
  app: NestAppName,
  services: ReturnType<typeof testServices>,
  env: Readonly<Record<string, string>> = {},
): Record<string, string> {
  return {
    APP_ENV: 'sandbox',
    PUBLIC_BASE_URL: ISSUER,
    DOCS_URL: `${ISSUER}/docs`,
    DATABASE_URL: services.databaseUrl,
    REDIS_URL: services.redisUrl,
    REDIS_KEY_PREFIX: services.redisKeyPrefix,
    LOG_LEVEL: 'silent',
    // Several apps share the test process: each gets a free metrics port (metricsUrl finds it).
    METRICS_PORT: '0',
    ...APP_SETTINGS[app],
    ...env,
    AMQP_URL: appBrokerUrl(app, env.AMQP_URL ?? services.amqpUrl),
  };
}

/**
 * An app as the built process (`node dist/apps/<app>/src/main.js`) on a free port, returned once
 * its /readyz answers. Output goes to `.run/integration-<run id>/<app>-<label>.log`.
 */
export async function spawnApp(app: NestAppName, label: string, env: Readonly<Record<string, string>>) {
  assertBuilt([app], { cli: false });
  const [port, metricsPort] = await freePorts(2);
  const logDir = path.join(ROOT, '.run', `integration-${process.env.TEST_RUN_ID ?? 'local'}`);
  fs.mkdirSync(logDir, { recursive: true });
  const logFile = path.join(logDir, `${app}-${label}.log`);
  const handle = startProcess({
    name: app,
    cmd: process.execPath,
    args: [mainJs(app)],
    env: { PATH: process.env.PATH ?? '', ...env, PORT: String(port), METRICS_PORT: String(metricsPort) },
    cwd: ROOT,
    logFile,
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttpOk(`${url}/readyz`, { timeoutMs: 30_000, isAlive: handle.alive, what: app });
  } catch (err) {
    await handle.stop(2000);
    throw new Error(`${(err as Error).message}\n${tail(logFile, 30)}`);
  }
  if (!handle.pid) throw new Error(`${app} has no pid`);
  const pid = handle.pid;
  return {
    url,
    /** Its metrics port's base URL (`${metricsUrl}/metrics`). */
    metricsUrl: `http://127.0.0.1:${metricsPort}`,
    pid,
    logFile,
    /** SIGKILL (kill -9): no shutdown hook runs, nothing is acked or recorded. */
    async kill() {
      process.kill(pid, 'SIGKILL');
      await handle.exited;
    },
    /** SIGTERM, then SIGKILL after a grace period. */
    async stop() {
      await handle.stop(5000);
    },
  };
}

/**
 * An app booted in this process as `serveApp` builds it (`buildApp`: its real root module, parsers
 * and error mapping), after its sandbox seed when it has one (idempotent, docs/rules.md, Sandbox:
 * every spec file seeds, in any order), listening on a free port of 127.0.0.1. `rpc`: also answer
 * the app's RPC queue (when it has one). `db`: a pool on the run's database for factories and
 * checks. TEST_LOG_LEVEL shows its logs.
 */
export async function bootApp<S extends ConfigSpec>(
  definition: AppDefinition<S>,
  env: Readonly<Record<string, string>>,
  rpc = false,
) {
  const config = loadConfig(definition.config, { PORT: '1', ...env });
  const logger = createLogger(definition.name, process.env.TEST_LOG_LEVEL ?? 'silent');
  await definition.seed?.(config, logger);
  const { app } = await buildApp(definition, config, logger, rpc);
  if (rpc) await app.startAllMicroservices();
  await app.listen({ port: 0, host: '127.0.0.1' });
  const db = new Pool({ connectionString: testServices().databaseUrl, max: 4 });
  return {
    app,
    url: (await app.getUrl()).replace('[::1]', '127.0.0.1'),
    db,
    async close() {
      await app.close();
      await db.end();
    },
  };
}

export type AppProcess = Awaited<ReturnType<typeof spawnApp>>;

interface Closable {
  close(): Promise<void>;
}
export type Keep = <P extends Closable>(part: P) => P;

/**
 * Starts the parts of a stack in order (`keep` each one); if one fails to start, the ones already
 * running are closed, last first, before it rethrows. `close()` closes them all the same way.
 */
export async function startStack<T extends object>(build: (keep: Keep) => Promise<T>): Promise<T & Closable> {
  const parts: Closable[] = [];
  const close = async () => {
    for (const part of parts.splice(0).reverse()) await part.close();
  };
  try {
    return { ...(await build((part) => (parts.push(part), part))), close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * The stack `build` starts (startStack), for the specs of one file (or describe block): started in
 * its beforeAll, closed in its afterAll. Each part read from the result stands in for the one
 * beforeAll creates, so specs can use them at the top level without `let` and an assignment.
 */
export function useStarted<T extends object>(build: (keep: Keep) => Promise<T>, timeoutMs = 60_000): T {
  let started: (T & Closable) | undefined;
  beforeAll(async () => {
    started = await startStack(build);
  }, timeoutMs);
  afterAll(async () => {
    await started?.close();
  });
  return new Proxy({} as T, {
    get: (_target, key) => startedLater(() => started?.[key as keyof T] as object | undefined),
  });
}

/** Reads through to the value `current` returns once beforeAll has set it. */
function startedLater<T extends object>(current: () => T | undefined): T {
  return new Proxy({} as T, {
    get(_target, key) {
      const value = current();
      if (value === undefined) throw new Error(`read ${String(key)} before beforeAll started it`);
      const member: unknown = Reflect.get(value, key, value);
      return typeof member === 'function' ? (member as (...a: unknown[]) => unknown).bind(value) : member;
    },
  });
}

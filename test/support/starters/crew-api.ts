import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { NestAppName } from '@svc/contracts';
import { createLogger, loadConfig } from '@svc/platform';
import { Pool } from 'pg';
import { CREW_API } from '../../../apps/crew-api/src/app.definition';
import { startAuthServer, startedLater, type AuthServerHarness } from './auth-server';
import { request, type HttpResponse } from '../http';
import { bootApp, spawnApp, type AppProcess } from './app-process';
import { brokerUrlOf } from '../broker-users';

export const INTERNAL_TOKEN = 'crew-it-internal-token';

/**
 * The environment of a resource app (crew-api, sponsorship-api) in the tests: this run's services,
 * the same issuer as the in-process auth-server, limits out of the way, and `overrides` last.
 */
export function resourceAppEnv(
  auth: AuthServerHarness,
  overrides: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const services = auth.services;
  return {
    APP_ENV: 'sandbox',
    PUBLIC_BASE_URL: auth.issuer,
    DOCS_URL: `${auth.issuer}/docs`,
    DATABASE_URL: services.databaseUrl,
    REDIS_URL: services.redisUrl,
    REDIS_KEY_PREFIX: services.redisKeyPrefix,
    AMQP_URL: services.amqpUrl,
    RPC_TIMEOUT_MS: '5000',
    // The run's Redis holds every spec's buckets (rate-limit specs included): specs that are not
    // about rate limits keep the limits out of their way.
    RATE_LIMIT_PER_MINUTE: '100000',
    RATE_LIMIT_PER_DAY: '1000000',
    LOG_LEVEL: 'silent',
    // Several apps share the test process: each gets a free metrics port (metricsUrl finds it).
    METRICS_PORT: '0',
    ...overrides,
  };
}

/** crew-api's environment in the tests. */
export function crewApiEnv(
  auth: AuthServerHarness,
  overrides: Readonly<Record<string, string>> = {},
): Record<string, string> {
  return asBrokerUser('crew-api', resourceAppEnv(auth, { INTERNAL_API_TOKEN: INTERNAL_TOKEN, ...overrides }));
}

/** `env` with its AMQP_URL (the run's vhost, or the one an override names) as `app`'s own broker user. */
export function asBrokerUser(app: NestAppName, env: Record<string, string>): Record<string, string> {
  return { ...env, AMQP_URL: brokerUrlOf(app, env.AMQP_URL) };
}

/** crew-api's sandbox seed, as `cli.js seed` runs it. Idempotent: every spec file seeds. */
export async function seedCrewRecords(auth: AuthServerHarness): Promise<void> {
  if (!CREW_API.seed) throw new Error('crew-api has no sandbox seed (CREW_API.seed)');
  const config = loadConfig(CREW_API.config, { PORT: '1', ...crewApiEnv(auth) });
  await CREW_API.seed(config, createLogger('crew-api', 'silent'));
}

/**
 * crew-api booted in-process as `serveApp` boots it (its real root module and error mapping), on a
 * free port, after its sandbox seed, next to an in-process auth-server (test/support/starters/auth-server.ts) that
 * it asks about tokens over RPC. `db` is a pool on the run's database for factories and checks.
 */
export interface CrewApiHarness {
  readonly url: string;
  readonly app: NestFastifyApplication;
  readonly db: Pool;
  /** GET a crew-data endpoint with a bearer token (undefined: no Authorization header). */
  get(path: string, token: string | undefined, headers?: Record<string, string>): Promise<HttpResponse>;
  /** A call of the internal records API with the internal token (or `token`). */
  internal(method: string, path: string, body?: unknown, token?: string): Promise<HttpResponse>;
  close(): Promise<void>;
}

export interface CrewApiStartOptions {
  /** Also answer crew-api's RPC queue (entitlements for sponsorship-api), as `serveApp` does. */
  readonly rpc?: boolean;
}

export async function startCrewApi(
  auth: AuthServerHarness,
  env: Readonly<Record<string, string>> = {},
  options: CrewApiStartOptions = {},
): Promise<CrewApiHarness> {
  const config = loadConfig(CREW_API.config, { PORT: '1', ...crewApiEnv(auth, env) });
  const logger = createLogger('crew-api', process.env.CREW_TEST_LOG_LEVEL ?? 'silent');
  await seedCrewRecords(auth);

  const { app, url } = await bootApp(CREW_API, config, logger, options.rpc);
  const db = new Pool({ connectionString: auth.services.databaseUrl, max: 4 });
  const client = crewClient(url);

  return {
    url,
    app,
    db,
    ...client,
    async close() {
      await app.close();
      await db.end();
    },
  };
}

/** HTTP calls of a partner (`get`) and of the service's crew apps (`internal`) to a crew-api. */
export function crewClient(url: string): Pick<CrewApiHarness, 'get' | 'internal'> {
  return {
    get: (path, token, headers = {}) =>
      request(`${url}${path}`, {
        headers: { ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), ...headers },
        timeoutMs: 10_000,
      }),
    internal: (method, path, body, token = INTERNAL_TOKEN) =>
      request(`${url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        timeoutMs: 10_000,
      }),
  };
}

export type CrewApiProcess = AppProcess & Pick<CrewApiHarness, 'get' | 'internal'>;

/**
 * crew-api as the built process, for what only the real process shows faithfully: how it answers
 * when the network under it fails. (In Jest's sandbox, errors raised by Node's own `net` module are
 * not `instanceof Error` of the test's realm, so an in-process app would classify a refused
 * database connection differently from production.)
 */
export async function spawnCrewApi(
  auth: AuthServerHarness,
  label: string,
  env: Readonly<Record<string, string>> = {},
): Promise<CrewApiProcess> {
  await seedCrewRecords(auth);
  const app = await spawnApp('crew-api', label, crewApiEnv(auth, { LOG_LEVEL: 'info', ...env }));
  return { ...app, ...crewClient(app.url) };
}

/**
 * auth-server and crew-api for the specs of one file (or describe block): started in its
 * beforeAll, closed in its afterAll.
 */
export function useCrewApi(
  env: Readonly<Record<string, string>> = {},
  options: CrewApiStartOptions = {},
): { auth: AuthServerHarness; crew: CrewApiHarness } {
  let auth: AuthServerHarness | undefined;
  let crew: CrewApiHarness | undefined;
  beforeAll(async () => {
    auth = await startAuthServer();
    crew = await startCrewApi(auth, env, options);
  }, 60_000);
  afterAll(async () => {
    await crew?.close();
    await auth?.close();
  });
  return { auth: startedLater(() => auth), crew: startedLater(() => crew) };
}

import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createLogger, loadConfig } from '@svc/platform';
import { Pool } from 'pg';
import { CREW_API } from '../../../apps/crew-api/src/app.definition';
import { startAuthServer, type AuthServerHarness } from './auth-server';
import { request, type HttpResponse } from '../http';
import {
  bootApp,
  INTERNAL_TOKEN,
  spawnApp,
  startStack,
  testAppEnv,
  useStarted,
  type AppProcess,
} from './app-process';

export { INTERNAL_TOKEN };

/**
 * crew-api booted in-process (bootApp), next to an in-process auth-server that it asks about
 * tokens over RPC. `db` is a pool on the run's database for factories and checks.
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

/** `rpc`: also answer crew-api's RPC queue (entitlements for sponsorship-api), as `serveApp` does. */
export async function startCrewApi(
  auth: AuthServerHarness,
  env: Readonly<Record<string, string>> = {},
  options: { readonly rpc?: boolean } = {},
): Promise<CrewApiHarness> {
  const { app, url } = await bootApp(CREW_API, testAppEnv('crew-api', auth.services, env), options.rpc);
  const db = new Pool({ connectionString: auth.services.databaseUrl, max: 4 });
  return {
    url,
    app,
    db,
    ...crewClient(url),
    async close() {
      await app.close();
      await db.end();
    },
  };
}

/** HTTP calls of a partner (`get`) and of the service's crew apps (`internal`) to a crew-api. */
function crewClient(url: string): Pick<CrewApiHarness, 'get' | 'internal'> {
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
 * database connection differently from production.) Seeded first on the run's own services, not
 * through `env` (whose database may be the path the test cuts).
 */
export async function spawnCrewApi(
  auth: AuthServerHarness,
  label: string,
  env: Readonly<Record<string, string>> = {},
): Promise<CrewApiProcess> {
  const config = loadConfig(CREW_API.config, { PORT: '1', ...testAppEnv('crew-api', auth.services) });
  await CREW_API.seed?.(config, createLogger('crew-api', 'silent'));
  const app = await spawnApp(
    'crew-api',
    label,
    testAppEnv('crew-api', auth.services, { LOG_LEVEL: 'info', ...env }),
  );
  return { ...app, ...crewClient(app.url) };
}

/** auth-server and crew-api for the specs of one file (useStarted). */
export function useCrewApi(
  env: Readonly<Record<string, string>> = {},
  options: { readonly rpc?: boolean } = {},
): { auth: AuthServerHarness; crew: CrewApiHarness } {
  return useStarted(
    () =>
      startStack(async (keep) => {
        const auth = keep(await startAuthServer());
        return { auth, crew: keep(await startCrewApi(auth, env, options)) };
      }),
    ['auth', 'crew'],
  );
}

import { createLogger, loadConfig } from '@svc/platform';
import { CREW_API } from '../../../apps/crew-api/src/app.definition';
import { startAuthServer, type AuthServerHarness } from './auth-server';
import { request, type HttpResponse } from '../http';
import { bootApp, INTERNAL_TOKEN, spawnApp, testAppEnv, useStarted } from './app-process';

export { INTERNAL_TOKEN };

/**
 * crew-api booted in-process (bootApp), next to an in-process auth-server that it asks about
 * tokens over RPC. `rpc`: also answer crew-api's RPC queue (entitlements for sponsorship-api), as
 * `serveApp` does.
 */
export async function startCrewApi(
  auth: AuthServerHarness,
  env: Readonly<Record<string, string>> = {},
  options: { readonly rpc?: boolean } = {},
) {
  const booted = await bootApp(CREW_API, testAppEnv('crew-api', auth.services, env), options.rpc);
  return { ...booted, ...crewClient(booted.url) };
}

export type CrewApiHarness = Awaited<ReturnType<typeof startCrewApi>>;

/** HTTP calls of a partner (`get`) and of the service's crew apps (`internal`) to a crew-api. */
function crewClient(url: string) {
  return {
    /** GET a crew-data endpoint with a bearer token (undefined: no Authorization header). */
    get: (path: string, token: string | undefined, headers: Record<string, string> = {}) =>
      request(`${url}${path}`, { bearer: token, headers, timeoutMs: 10_000 }),
    /** A call of the internal records API with the internal token (or `token`). */
    internal: (method: string, path: string, json?: unknown, token = INTERNAL_TOKEN) =>
      request(`${url}${path}`, { method, bearer: token, json, timeoutMs: 10_000 }),
  };
}

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
) {
  const config = loadConfig(CREW_API.config, { PORT: '1', ...testAppEnv('crew-api', auth.services) });
  await CREW_API.seed?.(config, createLogger('crew-api', 'silent'));
  const app = await spawnApp(
    'crew-api',
    label,
    testAppEnv('crew-api', auth.services, { LOG_LEVEL: 'info', ...env }),
  );
  return { ...app, ...crewClient(app.url) };
}

export type CrewApiProcess = Awaited<ReturnType<typeof spawnCrewApi>>;

/** auth-server and crew-api for the specs of one file (useStarted). */
export function useCrewApi(
  env: Readonly<Record<string, string>> = {},
  options: { readonly rpc?: boolean } = {},
) {
  return useStarted(async (keep) => {
    const auth = keep(await startAuthServer());
    return { auth, crew: keep(await startCrewApi(auth, env, options)) };
  });
}

/**
 * Two crew-api replicas on one database: `keeping` keeps what its cache setting (`setting`) lets
 * it keep, `reading` (the setting at 0) reads everything from the database. `both` asks them the
 * same request and checks their answers equal, byte for byte, validators included: a kept answer
 * is never one the database would not give.
 */
export function keepingReplicas(setting: string, kept = '50') {
  const replicas = useStarted(async (keep) => {
    const auth = keep(await startAuthServer());
    const keeping = keep(await startCrewApi(auth, { [setting]: kept }));
    return { auth, keeping, reading: keep(await startCrewApi(auth, { [setting]: '0' })) };
  }, 90_000);
  const seen = (r: HttpResponse) => ({
    status: r.status,
    etag: r.header('etag'),
    lastModified: r.header('last-modified'),
    body: r.text,
  });
  return {
    auth: replicas.auth,
    keeping: replicas.keeping,
    reading: replicas.reading,
    async both(path: string, token: string, headers: Record<string, string> = {}) {
      const a = await replicas.keeping.get(path, token, headers);
      const b = await replicas.reading.get(path, token, headers);
      expect(seen(a)).toEqual(seen(b));
      return a;
    },
  };
}

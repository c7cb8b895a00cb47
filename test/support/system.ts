import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  appEnv,
  assertBuilt,
  generateGateway,
  mainJs,
  nginxArgs,
  ROOT,
  runCli,
  writtenApps,
  type NestAppName,
} from '../../scripts/lib/apps.cjs';
import { APPS, appBrokerUrl, appConnections, cliConnections } from '../../scripts/lib/credentials.cjs';
import { freePorts, waitForHttpOk } from '../../scripts/lib/net.cjs';
import { signalGroup, startProcess, tail, which, type ProcessHandle } from '../../scripts/lib/procs.cjs';

/**
 * The e2e harness: the built apps and the nginx gateway as real processes, on free random
 * ports (so that two test runs, or a running `npm start`, never collide), against this run's
 * own database, RabbitMQ vhost and Redis key prefix (set up by `npm test`).
 * Every process writes its output to a file under `.run/e2e-<run id>/` for debugging.
 */
export interface SystemOptions {
  /** Apps to start; default: every app that exists. */
  readonly apps?: readonly NestAppName[];
  /** Extra environment for every app (e.g. WEBHOOK_RETRY_SCHEDULE); wins over the defaults. */
  readonly env?: Readonly<Record<string, string>>;
  /** Label of the log folder. */
  readonly label?: string;
  /** How long each process may take to become ready (default 60 s). */
  readonly readyTimeoutMs?: number;
  /**
   * Processes of every app, each on its own port, all behind the gateway (default: E2E_REPLICAS,
   * which `npm test` sets to 2 for the e2e tier, else 1).
   */
  readonly replicas?: number;
}

type StopSignal = 'SIGTERM' | 'SIGKILL';

let systemsStarted = 0;
const everyHandle = new Set<ProcessHandle>();
// If a test run dies without calling stop(), leave no process behind.
process.once('exit', () => {
  for (const h of everyHandle) if (h.alive() && h.pid) signalGroup(h.pid, 'SIGKILL');
});

/**
 * The `cli.js` commands a system runs before it starts the apps, in order. Every app's migrations and sandbox data the first
 * time; on a database a system of this run has prepared already, only auth-server's seed: it brings
 * the sandbox partners and members back in line (secrets, suspension, the webhook URL of this
 * system's SANDBOX_WEBHOOK_URL) whatever earlier test files did to them. The other seeds only add
 * the rows that are missing (crew-api's records, sponsorship-api's seats: a row there is left as
 * it is) and no test deletes one, so running them again changes nothing.
 */
export function prepareCommands(
  apps: readonly string[],
  prepared: boolean,
): readonly (readonly [string, 'migrate' | 'seed'])[] {
  if (prepared) return apps.includes('auth-server') ? [['auth-server', 'seed']] : [];
  return (['migrate', 'seed'] as const).flatMap((command) => apps.map((app) => [app, command] as const));
}

/** The password hash cost (log2 N) of every test app; production refuses anything below 17. */
export const TEST_PASSWORD_HASH_COST = process.env.PASSWORD_HASH_COST || '14';

export async function startSystem(options: SystemOptions = {}) {
  const runId = process.env.TEST_RUN_ID;
  if (!runId || !process.env.DATABASE_URL || !process.env.AMQP_URL || !process.env.REDIS_URL) {
    throw new Error(
      "the e2e tests need the run's own services: start them with `npm test` or `npm run test:e2e`",
    );
  }
  const names = [...(options.apps ?? writtenApps())];
  assertBuilt(names, { generator: true });
  const nginxBin = process.env.NGINX_BIN || which('nginx');
  if (!nginxBin) throw new Error('nginx is not installed (npm test installs it)');

  systemsStarted += 1;
  const logDir = path.join(ROOT, '.run', `e2e-${runId}`, `${options.label ?? 'system'}-${systemsStarted}`);
  fs.rmSync(logDir, { recursive: true, force: true });
  fs.mkdirSync(logDir, { recursive: true });

  // E2E_REPLICAS: `npm test` sets 2 for the e2e tier.
  const replicas = options.replicas ?? Number(process.env.E2E_REPLICAS?.trim() || 1);
  if (!Number.isInteger(replicas) || replicas < 1 || replicas > 8) {
    throw new Error(`replicas (or E2E_REPLICAS) must be an integer from 1 to 8 (got ${replicas})`);
  }
  // Every listener of the system gets its port here, metrics ports included: a process that bound
  // an ephemeral port of its own (METRICS_PORT=0) while the others start could take one picked
  // for another app's API (EADDRINUSE, seen in CI).
  const processes = names.length * replicas;
  const [gatewayPort, ...free] = await freePorts(2 * processes + 1);
  const appPorts = free.slice(0, processes);
  const metricsPorts = free.slice(processes);
  const replicaPorts: Record<string, number[]> = Object.fromEntries(
    names.map((n, i) => [n, appPorts.slice(i * replicas, (i + 1) * replicas)]),
  );
  const metricsPortOf = (app: string, replica: number) =>
    String(metricsPorts[names.indexOf(app as NestAppName) * replicas + replica]);
  const baseUrl = `http://127.0.0.1:${gatewayPort}`;
  const publicBaseUrl = `http://localhost:${gatewayPort}`;
  const docsUrl = options.env?.DOCS_URL ?? `${publicBaseUrl}/docs`;
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  // Serving processes connect as their app's own role and broker user; the CLI as the owner. A
  // caller that brings servers of its own (the fault matrix) has no such roles there: its apps
  // connect to PostgreSQL as its URL's user, and to its broker as their own users, which a private
  // broker provisions (test/support/private-broker.ts): RPC is answered to those alone.
  const owner = { DATABASE_URL: process.env.DATABASE_URL, AMQP_URL: process.env.AMQP_URL };
  const ownServers = options.env?.DATABASE_URL !== undefined || options.env?.AMQP_URL !== undefined;
  const connections = (app: string, cli: boolean): Record<string, string | undefined> => {
    if (!ownServers) return cli ? cliConnections(app, owner) : appConnections(app, owner);
    return {};
  };
  /** The broker URL (every node of a cluster) of servers of the caller's own, as `app`'s user. */
  const ownBroker = (app: string): Record<string, string> =>
    ownServers && options.env?.AMQP_URL !== undefined && app in APPS
      ? {
          AMQP_URL: options.env.AMQP_URL.split(',')
            .map((url) => appBrokerUrl(app, url))
            .join(','),
        }
      : {};
  const envOf = (app: string, replica = 0, cli = false) =>
    appEnv({
      app,
      gatewayPort,
      services: connections(app, cli),
      fixed: {
        APP_ENV: 'sandbox',
        PUBLIC_BASE_URL: publicBaseUrl,
        DOCS_URL: docsUrl,
        LOG_LEVEL: process.env.LOG_LEVEL || 'info',
        // scrypt at 2^14 rather than production's 2^17: the suites sign in often on a shared machine.
        PASSWORD_HASH_COST: TEST_PASSWORD_HASH_COST,
        // A port of its own per process (above); the monitoring suite finds it in the process's log.
        METRICS_PORT: metricsPortOf(app, replica),
        ...options.env,
        ...ownBroker(app),
        PORT: replicaPorts[app]?.[replica],
      },
    });

  const handles = new Map<string, ProcessHandle>();
  const logOf = (name: string) => path.join(logDir, `${name}.log`);
  /** The first replica keeps the app's own name (and log file), the others get -2, -3, ... */
  const replicaName = (app: string, replica: number) => (replica === 0 ? app : `${app}-${replica + 1}`);
  const checkReplica = (app: string, replica: number) => {
    if (!replicaPorts[app]?.[replica]) throw new Error(`${app} has no replica ${replica} in this system`);
  };

  const spawnApp = async (app: string, replica = 0) => {
    const name = replicaName(app, replica);
    const handle = startProcess({
      name,
      cmd: process.execPath,
      args: [mainJs(app)],
      env: envOf(app, replica),
      cwd: ROOT,
      logFile: logOf(name),
    });
    everyHandle.add(handle);
    handles.set(name, handle);
    const url = `http://127.0.0.1:${replicaPorts[app][replica]}/readyz`;
    await withLog(
      waitForHttpOk(url, { timeoutMs: readyTimeoutMs, isAlive: handle.alive, what: name }),
      logOf(name),
    );
  };

  const stopOne = async (name: string, signal: StopSignal = 'SIGTERM') => {
    const handle = handles.get(name);
    if (!handle) return;
    if (signal === 'SIGKILL' && handle.pid) {
      signalGroup(handle.pid, 'SIGKILL');
      await handle.exited;
    }
    await handle.stop(10_000);
    everyHandle.delete(handle);
    handles.delete(name);
  };
  const replicaIndexes = Array.from({ length: replicas }, (_, i) => i);

  const stop = async () => {
    await stopOne('gateway');
    await Promise.all([...handles.keys()].map((name) => stopOne(name)));
  };

  const startGateway = async () => {
    // The nginx prefix (configuration, the docs site with the sandbox's published credentials)
    // sits beside the logs, not among them: tests read every log file for leaked secrets.
    const gatewayDir = `${logDir}-gateway`;
    fs.rmSync(gatewayDir, { recursive: true, force: true });
    const generated = generateGateway(gatewayDir, {
      gatewayPort,
      ports: Object.fromEntries(
        names.map((n) => [n, replicaPorts[n].map((port) => `127.0.0.1:${port}`).join(',')]),
      ),
      // The suites sign in and exchange tokens from 127.0.0.1 far faster than any person or
      // partner: the gateway's per-address abuse limits are lifted (a test may set its own).
      env: {
        GATEWAY_LOGIN_RATE: '100000r/m',
        GATEWAY_OAUTH_RATE: '100000r/s',
        ...envOf(names[0] ?? 'crew-api'),
      },
      logFile: logOf('gateway-generate'),
    });
    await withLog(generated, logOf('gateway-generate'));
    const nginx = startProcess({
      name: 'gateway',
      cmd: nginxBin,
      args: nginxArgs(gatewayDir),
      cwd: gatewayDir,
      logFile: logOf('gateway'),
    });
    everyHandle.add(nginx);
    handles.set('gateway', nginx);
    const healthz = waitForHttpOk(`${baseUrl}/healthz`, {
      timeoutMs: 20_000,
      isAlive: nginx.alive,
      what: 'gateway',
    });
    await withLog(healthz, logOf('gateway'));
  };

  try {
    // The run's own database: migrated and seeded by the first system of the run that prepared
    // every app (a marker beside the logs says so), not by every test file again.
    const marker = ownServers
      ? undefined
      : path.join(ROOT, '.run', `e2e-${runId}`, `prepared-${new URL(owner.DATABASE_URL).pathname.slice(1)}`);
    const prepared = marker !== undefined && fs.existsSync(marker);
    for (const [app, command] of prepareCommands(names, prepared)) {
      const logFile = path.join(logDir, `${app}-${command}.log`);
      await withLog(runCli(app, command, envOf(app, 0, true), { logFile, timeoutMs: 120_000 }), logFile);
    }
    const everyApp = writtenApps().every((app) => names.includes(app));
    if (marker && !prepared && everyApp) fs.writeFileSync(marker, `${new Date().toISOString()}\n`);

    // The apps and the gateway start side by side (nginx needs no upstream up to start; no
    // request reaches it before the apps are ready).
    const started = await Promise.allSettled([
      ...names.flatMap((app) => replicaIndexes.map((i) => spawnApp(app, i))),
      startGateway(),
    ]);
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  } catch (err) {
    await stop();
    throw err;
  }

  return {
    /** The gateway, e.g. http://127.0.0.1:41234 (no trailing slash). */
    baseUrl,
    gatewayPort,
    /** DOCS_URL given to the apps and the gateway: every Problem `type` starts with it. */
    docsUrl,
    /** Processes per app. */
    replicas,
    /** Every replica's port, per app (index = replica). */
    replicaPorts: replicaPorts as Readonly<Record<string, readonly number[]>>,
    logDir,
    /** An app's own base URL (its first replica, or `replica`), bypassing the gateway. */
    appUrl: (name: NestAppName, replica = 0) => `http://127.0.0.1:${replicaPorts[name][replica]}`,
    /** Stops every replica of one app (SIGTERM, then SIGKILL after 10 s); the gateway keeps running. */
    stopApp: async (name: NestAppName) => {
      await Promise.all(replicaIndexes.map((i) => stopOne(replicaName(name, i))));
    },
    /** Starts the stopped replicas of an app again on their ports and waits until they are ready. */
    startApp: async (name: NestAppName) => {
      await Promise.all(
        replicaIndexes
          .filter((i) => !handles.get(replicaName(name, i))?.alive())
          .map((i) => spawnApp(name, i)),
      );
    },
    /** Stops one replica: SIGTERM (it drains; SIGKILL after 10 s) or SIGKILL (a crash); resolves when it is gone. */
    stopReplica: async (name: NestAppName, replica: number, signal: StopSignal = 'SIGTERM') => {
      checkReplica(name, replica);
      await stopOne(replicaName(name, replica), signal);
    },
    /** Starts a stopped replica again on its port and waits until it is ready. */
    startReplica: async (name: NestAppName, replica: number) => {
      checkReplica(name, replica);
      if (handles.get(replicaName(name, replica))?.alive()) return;
      await spawnApp(name, replica);
    },
    /** Runs `cli.js <args>` of an app against this system (its database, broker and Redis), as an operator would. */
    cli: (name: NestAppName, args: readonly string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          [path.join(ROOT, 'dist', 'apps', name, 'src', 'cli.js'), ...args],
          { cwd: ROOT, env: { ...envOf(name, 0, true), LOG_LEVEL: 'warn', PORT: '0' }, timeout: 60_000 },
          (err, stdout, stderr) => {
            const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
            resolve({ code, stdout, stderr });
          },
        );
      }),
    /** Stops every process this system started. */
    stop,
  };
}

export type RunningSystem = Awaited<ReturnType<typeof startSystem>>;

/** `work`, failing with the end of `logFile` added to its error. */
function withLog<T>(work: Promise<T>, logFile: string): Promise<T> {
  return work.catch((err: Error) => {
    throw new Error(`${err.message}\n--- ${logFile} ---\n${tail(logFile, 40)}`);
  });
}

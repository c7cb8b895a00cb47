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
import { freePorts, waitForHttpOk } from '../../scripts/lib/net.cjs';
import { startProcess, tail, which, type ProcessHandle } from '../../scripts/lib/procs.cjs';

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
  /** Run each app's `cli.js migrate` then `cli.js seed` first (default true). */
  readonly prepare?: boolean;
  /** Start the nginx gateway (default true). */
  readonly gateway?: boolean;
  /** Label of the log folder. */
  readonly label?: string;
  /** How long each process may take to become ready (default 60 s). */
  readonly readyTimeoutMs?: number;
}

export interface RunningSystem {
  /** The gateway, e.g. http://127.0.0.1:41234 (no trailing slash). */
  readonly baseUrl: string;
  readonly gatewayPort: number;
  /** DOCS_URL given to the apps and the gateway: every Problem `type` starts with it. */
  readonly docsUrl: string;
  readonly ports: Readonly<Record<string, number>>;
  readonly logDir: string;
  /** An app's own base URL, bypassing the gateway. */
  appUrl(name: NestAppName): string;
  /** Stops one app (SIGTERM, then SIGKILL after 10 s); the gateway keeps running. */
  stopApp(name: NestAppName): Promise<void>;
  /** Starts a stopped app again on the same port and waits until it is ready. */
  startApp(name: NestAppName): Promise<void>;
  /** Stops every process this system started. */
  stop(): Promise<void>;
}

let systemsStarted = 0;
const everyHandle = new Set<ProcessHandle>();
// If a test run dies without calling stop(), leave no process behind.
process.once('exit', () => {
  for (const h of everyHandle) if (h.alive() && h.pid) killGroup(h.pid);
});

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    /* gone */
  }
}

export async function startSystem(options: SystemOptions = {}): Promise<RunningSystem> {
  const runId = process.env.TEST_RUN_ID;
  if (!runId || !process.env.DATABASE_URL || !process.env.AMQP_URL || !process.env.REDIS_URL) {
    throw new Error(
      "the e2e tests need the run's own services: start them with `npm test` or `npm run test:e2e`",
    );
  }
  const names = [...(options.apps ?? writtenApps())];
  const withGateway = options.gateway ?? true;
  assertBuilt(names, { generator: withGateway });
  const nginxBin = process.env.NGINX_BIN || which('nginx');
  if (withGateway && !nginxBin) throw new Error('nginx is not installed (npm test installs it)');

  systemsStarted += 1;
  const logDir = path.join(ROOT, '.run', `e2e-${runId}`, `${options.label ?? 'system'}-${systemsStarted}`);
  fs.rmSync(logDir, { recursive: true, force: true });
  fs.mkdirSync(logDir, { recursive: true, mode: 0o755 });

  const [gatewayPort, ...appPorts] = await freePorts(names.length + 1);
  const ports: Record<string, number> = Object.fromEntries(names.map((n, i) => [n, appPorts[i]]));
  const baseUrl = `http://127.0.0.1:${gatewayPort}`;
  const publicBaseUrl = `http://localhost:${gatewayPort}`;
  const docsUrl = options.env?.DOCS_URL ?? `${publicBaseUrl}/docs`;
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  const envOf = (app: string) =>
    appEnv({
      gatewayPort,
      fixed: {
        APP_ENV: 'sandbox',
        PUBLIC_BASE_URL: publicBaseUrl,
        DOCS_URL: docsUrl,
        LOG_LEVEL: process.env.LOG_LEVEL || 'info',
        ...options.env,
        PORT: ports[app],
      },
    });

  const handles = new Map<string, ProcessHandle>();
  const logOf = (name: string) => path.join(logDir, `${name}.log`);

  const spawnApp = async (app: string) => {
    const handle = startProcess({
      name: app,
      cmd: process.execPath,
      args: [mainJs(app)],
      env: envOf(app),
      cwd: ROOT,
      logFile: logOf(app),
    });
    everyHandle.add(handle);
    handles.set(app, handle);
    try {
      await waitForHttpOk(`http://127.0.0.1:${ports[app]}/readyz`, {
        timeoutMs: readyTimeoutMs,
        isAlive: handle.alive,
        what: app,
      });
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- ${logOf(app)} ---\n${tail(logOf(app), 40)}`);
    }
  };

  const stopOne = async (name: string) => {
    const handle = handles.get(name);
    if (!handle) return;
    await handle.stop(10_000);
    everyHandle.delete(handle);
    handles.delete(name);
  };

  const stop = async () => {
    await stopOne('gateway');
    await Promise.all([...handles.keys()].map(stopOne));
  };

  try {
    if (options.prepare ?? true) {
      for (const command of ['migrate', 'seed']) {
        for (const app of names) {
          const logFile = path.join(logDir, `${app}-${command}.log`);
          await runCli(app, command, envOf(app), { logFile, timeoutMs: 120_000 }).catch((err: Error) => {
            throw new Error(`${err.message}\n${tail(logFile, 40)}`);
          });
        }
      }
    }

    // Start the apps side by side (2 cores: the wait is mostly I/O).
    await Promise.all(names.map(spawnApp));

    if (withGateway) {
      // The nginx prefix (configuration, the docs site with the sandbox's published credentials)
      // sits beside the logs, not among them: tests read every log file for leaked secrets.
      const gatewayDir = `${logDir}-gateway`;
      fs.rmSync(gatewayDir, { recursive: true, force: true });
      await generateGateway(gatewayDir, {
        gatewayPort,
        ports,
        env: envOf(names[0] ?? 'crew-api'),
        logFile: logOf('gateway-generate'),
      }).catch((err: Error) => {
        throw new Error(`${err.message}\n${tail(logOf('gateway-generate'), 40)}`);
      });
      const nginx = startProcess({
        name: 'gateway',
        cmd: nginxBin,
        args: nginxArgs(gatewayDir),
        cwd: gatewayDir,
        logFile: logOf('gateway'),
      });
      everyHandle.add(nginx);
      handles.set('gateway', nginx);
      await waitForHttpOk(`${baseUrl}/healthz`, {
        timeoutMs: 20_000,
        isAlive: nginx.alive,
        what: 'gateway',
      }).catch((err: Error) => {
        throw new Error(`${err.message}\n--- ${logOf('gateway')} ---\n${tail(logOf('gateway'), 40)}`);
      });
    }
  } catch (err) {
    await stop();
    throw err;
  }

  return {
    baseUrl,
    gatewayPort,
    docsUrl,
    ports,
    logDir,
    appUrl: (name) => `http://127.0.0.1:${ports[name]}`,
    stopApp: (name) => stopOne(name),
    startApp: async (name) => {
      if (handles.get(name)?.alive()) return;
      await spawnApp(name);
    },
    stop,
  };
}

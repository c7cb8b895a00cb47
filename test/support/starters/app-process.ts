import fs from 'node:fs';
import path from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { NestAppName } from '@svc/contracts';
import { buildApp, type AppDefinition, type ConfigOf, type ConfigSpec } from '@svc/platform';
import type { Logger } from 'pino';
import { assertBuilt, mainJs, ROOT } from '../../../scripts/lib/apps.cjs';
import { freePorts, waitForHttpOk } from '../../../scripts/lib/net.cjs';
import { startProcess, tail } from '../../../scripts/lib/procs.cjs';

export interface AppProcess {
  readonly url: string;
  /** Its metrics port's base URL (`${metricsUrl}/metrics`). */
  readonly metricsUrl: string;
  readonly pid: number;
  readonly logFile: string;
  /** SIGKILL (kill -9): no shutdown hook runs, nothing is acked or recorded. */
  kill(): Promise<void>;
  /** SIGTERM, then SIGKILL after a grace period. */
  stop(): Promise<void>;
}

/**
 * An app as the built process (`node dist/apps/<app>/src/main.js`) on a free port, returned once
 * its /readyz answers. Output goes to `.run/integration-<run id>/<app>-<label>.log`.
 */
export async function spawnApp(
  app: NestAppName,
  label: string,
  env: Readonly<Record<string, string>>,
): Promise<AppProcess> {
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
    metricsUrl: `http://127.0.0.1:${metricsPort}`,
    pid,
    logFile,
    async kill() {
      process.kill(pid, 'SIGKILL');
      await handle.exited;
    },
    async stop() {
      await handle.stop(5000);
    },
  };
}

/**
 * An app booted in this process as `serveApp` builds it (`buildApp`), listening on a free port of
 * 127.0.0.1. `rpc`: also answer the app's RPC queue (when it has one).
 */
export async function bootApp<S extends ConfigSpec>(
  definition: AppDefinition<S>,
  config: ConfigOf<S>,
  logger: Logger,
  rpc = false,
): Promise<{ app: NestFastifyApplication; url: string }> {
  const { app } = await buildApp(definition, config, logger, rpc);
  if (rpc) await app.startAllMicroservices();
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1') };
}

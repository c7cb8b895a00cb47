import fs from 'node:fs';
import path from 'node:path';
import { assertBuilt, mainJs, ROOT } from '../../../scripts/lib/apps.cjs';
import { freePorts, waitForHttpOk } from '../../../scripts/lib/net.cjs';
import { startProcess, tail } from '../../../scripts/lib/procs.cjs';
import type { AuthServerHarness } from './auth-server';

/**
 * webhook-dispatcher as the built process (`node dist/apps/webhook-dispatcher/src/main.js`), for
 * what only a real process shows: being killed with SIGKILL mid-delivery, or losing its broker.
 * Output goes to `.run/integration-<run id>/webhook-dispatcher-<label>.log`.
 */
export interface DispatcherProcess {
  readonly pid: number;
  readonly logFile: string;
  /** SIGKILL (kill -9): no shutdown hook runs, nothing is acked or recorded. */
  kill(): Promise<void>;
  /** SIGTERM, then SIGKILL after a grace period. */
  stop(): Promise<void>;
}

export async function spawnDispatcher(
  auth: AuthServerHarness,
  label: string,
  env: Readonly<Record<string, string>> = {},
): Promise<DispatcherProcess> {
  assertBuilt(['webhook-dispatcher'], { cli: false });
  const [port] = await freePorts(1);
  const logDir = path.join(ROOT, '.run', `integration-${process.env.TEST_RUN_ID ?? 'local'}`);
  fs.mkdirSync(logDir, { recursive: true });
  const logFile = path.join(logDir, `webhook-dispatcher-${label}.log`);
  const handle = startProcess({
    name: 'webhook-dispatcher',
    cmd: process.execPath,
    args: [mainJs('webhook-dispatcher')],
    env: {
      PATH: process.env.PATH ?? '',
      APP_ENV: 'sandbox',
      PUBLIC_BASE_URL: auth.issuer,
      DOCS_URL: `${auth.issuer}/docs`,
      DATABASE_URL: auth.services.databaseUrl,
      AMQP_URL: auth.services.amqpUrl,
      RPC_TIMEOUT_MS: '5000',
      LOG_LEVEL: 'info',
      ...env,
      PORT: String(port),
    },
    cwd: ROOT,
    logFile,
  });
  try {
    await waitForHttpOk(`http://127.0.0.1:${port}/readyz`, {
      timeoutMs: 30_000,
      isAlive: handle.alive,
      what: 'webhook-dispatcher',
    });
  } catch (err) {
    await handle.stop(2000);
    throw new Error(`${(err as Error).message}\n${tail(logFile, 30)}`);
  }
  if (!handle.pid) throw new Error('webhook-dispatcher has no pid');
  const pid = handle.pid;
  return {
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

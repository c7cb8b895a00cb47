import fs from 'node:fs';
import path from 'node:path';
import { assertBuilt, mainJs, ROOT } from '../../../scripts/lib/apps.cjs';
import { freePorts, waitForHttpOk } from '../../../scripts/lib/net.cjs';
import { startProcess, tail } from '../../../scripts/lib/procs.cjs';
import type { AuthServerHarness } from './auth-server';
import { crewApiEnv, crewClient, seedCrewRecords, type CrewApiHarness } from './crew-api';

/**
 * crew-api as the built process (`node dist/apps/crew-api/src/main.js`), for what only the real
 * process shows faithfully: how it answers when the network under it fails. (In Jest's sandbox,
 * errors raised by Node's own `net` module are not `instanceof Error` of the test's realm, so an
 * in-process app would classify a refused database connection differently from production.)
 * Output goes to `.run/integration-<run id>/crew-api-<label>.log`.
 */
export interface CrewApiProcess extends Pick<CrewApiHarness, 'get' | 'internal'> {
  readonly url: string;
  readonly logFile: string;
  stop(): Promise<void>;
}

export async function spawnCrewApi(
  auth: AuthServerHarness,
  label: string,
  env: Readonly<Record<string, string>> = {},
): Promise<CrewApiProcess> {
  assertBuilt(['crew-api'], { cli: false });
  await seedCrewRecords(auth);
  const [port] = await freePorts(1);
  const logDir = path.join(ROOT, '.run', `integration-${process.env.TEST_RUN_ID ?? 'local'}`);
  fs.mkdirSync(logDir, { recursive: true });
  const logFile = path.join(logDir, `crew-api-${label}.log`);
  const handle = startProcess({
    name: 'crew-api',
    cmd: process.execPath,
    args: [mainJs('crew-api')],
    env: {
      PATH: process.env.PATH ?? '',
      ...crewApiEnv(auth, { LOG_LEVEL: 'info', ...env }),
      PORT: String(port),
    },
    cwd: ROOT,
    logFile,
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttpOk(`${url}/readyz`, { timeoutMs: 30_000, isAlive: handle.alive, what: 'crew-api' });
  } catch (err) {
    await handle.stop(2000);
    throw new Error(`${(err as Error).message}\n${tail(logFile, 30)}`);
  }
  return {
    url,
    logFile,
    ...crewClient(url),
    async stop() {
      await handle.stop(5000);
    },
  };
}

import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DIST, NEST_APPS, ROOT } from '../../scripts/lib/apps.cjs';
import { freePorts, waitForHttpOk } from '../../scripts/lib/net.cjs';
import { startProcess, tail, type ProcessHandle } from '../../scripts/lib/procs.cjs';
import { APP_SCHEMAS } from '@svc/contracts';
import { testServices } from '../support/services';

/**
 * The runtime the Dockerfile builds, without Docker: `npm ci --omit=dev` from the committed lock
 * in an empty directory, plus package.json and dist/. Every app started from there with
 * NODE_ENV=production and APP_ENV=production must become ready, so a package the apps need at
 * run time but declared as a devDependency (or a lock out of sync with package.json) fails here
 * instead of in the first rollout. The directory is outside the repository, so Node cannot find
 * the repository's own node_modules (dev dependencies included) by walking up.
 */
const NPM_TIMEOUT_MS = 240_000;
jest.setTimeout(NPM_TIMEOUT_MS + 120_000);

let runtime: string;
const handles: ProcessHandle[] = [];

beforeAll(() => {
  runtime = fs.mkdtempSync(path.join(os.tmpdir(), 'crew-runtime-'));
  for (const file of ['package.json', 'package-lock.json'])
    fs.copyFileSync(path.join(ROOT, file), path.join(runtime, file));
  // The same command as the Dockerfile's prod-deps stage.
  const ci = spawnSync('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline'], {
    cwd: runtime,
    encoding: 'utf8',
    timeout: NPM_TIMEOUT_MS,
  });
  if (ci.status !== 0) throw new Error(`npm ci --omit=dev failed (${ci.status ?? ci.signal}):\n${ci.stderr}`);
  fs.cpSync(DIST, path.join(runtime, 'dist'), { recursive: true });
});

afterAll(async () => {
  await Promise.all(handles.map((h) => h.stop(5000)));
  if (runtime) fs.rmSync(runtime, { recursive: true, force: true });
});

function productionEnv(port: number): NodeJS.ProcessEnv {
  const services = testServices();
  return {
    PATH: process.env.PATH,
    NODE_ENV: 'production',
    APP_ENV: 'production',
    PORT: String(port),
    // Every app's default metrics port is the same (9464, one app per pod): on one host each binds a free one.
    METRICS_PORT: '0',
    DATABASE_URL: services.databaseUrl,
    REDIS_URL: services.redisUrl,
    REDIS_KEY_PREFIX: services.redisKeyPrefix,
    AMQP_URL: services.amqpUrl,
    PUBLIC_BASE_URL: 'https://api.crew-records.example',
    // Fresh secrets of production strength: the apps refuse sandbox values here.
    INTERNAL_API_TOKEN: randomBytes(32).toString('base64url'),
    CURSOR_SIGNING_KEY: randomBytes(32).toString('base64url'),
    SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
  };
}

describe('the runtime image (npm ci --omit=dev + dist/)', () => {
  it('left the build and test tools out, as the image does', () => {
    // Dev dependencies that some runtime dependency also needs (ajv, say) are installed as theirs.
    const absent = ['typescript', 'jest', '@nestjs/testing', '@swc/core'];
    expect(absent.filter((dep) => fs.existsSync(path.join(runtime, 'node_modules', dep)))).toEqual([]);
  });

  it('starts every app with NODE_ENV=production and answers /readyz 200', async () => {
    const ports = await freePorts(NEST_APPS.length);
    const logDir = path.join(ROOT, '.run', `integration-${process.env.TEST_RUN_ID ?? 'local'}`, 'runtime');
    fs.mkdirSync(logDir, { recursive: true });
    await Promise.all(
      NEST_APPS.map(async (app, i) => {
        const logFile = path.join(logDir, `${app}.log`);
        const handle = startProcess({
          name: app,
          cmd: process.execPath,
          args: [path.join(runtime, 'dist', 'apps', app, 'src', 'main.js')],
          env: productionEnv(ports[i]),
          cwd: runtime,
          logFile,
        });
        handles.push(handle);
        await waitForHttpOk(`http://127.0.0.1:${ports[i]}/readyz`, {
          timeoutMs: 60_000,
          isAlive: handle.alive,
          what: app,
        }).catch((err: Error) => {
          throw new Error(`${app} from the runtime image: ${err.message}\n${tail(logFile, 30)}`);
        });
      }),
    );
    expect(handles.every((h) => h.alive())).toBe(true);
  });

  it('passes the wait-for-migrations init container of every app (k8s) once the migrations ran', () => {
    // globalSetup has migrated this run's database; the script runs as the init container does:
    // from the image's working directory, with the app's DATABASE_URL only.
    const script = path.join(ROOT, 'k8s', 'base', 'wait-for-migrations.js');
    for (const app of NEST_APPS) {
      const run = spawnSync(process.execPath, [script, app, APP_SCHEMAS[app]], {
        cwd: runtime,
        encoding: 'utf8',
        timeout: 60_000,
        env: { PATH: process.env.PATH, NODE_ENV: 'production', DATABASE_URL: testServices().databaseUrl },
      });
      expect({ app, status: run.status, stderr: run.stderr }).toEqual({ app, status: 0, stderr: '' });
      expect(run.stdout).toMatch(new RegExp(`^${app}: all \\d+ migrations of this image are applied`));
    }
  });

  it('generates the production gateway configuration', () => {
    const out = path.join(runtime, 'gateway');
    const gen = spawnSync(
      process.execPath,
      [path.join(runtime, 'dist', 'apps', 'gateway', 'src', 'generate.js'), '--out', out],
      {
        cwd: runtime,
        encoding: 'utf8',
        env: {
          PATH: process.env.PATH,
          NODE_ENV: 'production',
          PUBLIC_BASE_URL: 'https://api.crew-records.example',
        },
      },
    );
    expect(gen.stderr).toBe('');
    expect(gen.status).toBe(0);
    const conf = fs.readFileSync(path.join(out, 'nginx.conf'), 'utf8');
    expect(conf).toContain('APP_ENV=production');
    expect(conf).not.toMatch(/location [=^~ ]+\/internal\//);
    expect(conf).toMatch(/location [=^~ ]+\/v1\/me/);
  });
});

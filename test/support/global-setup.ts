import fs from 'node:fs';
import path from 'node:path';
import { appEnv, assertBuilt, ROOT, runCli, writtenApps } from '../../scripts/lib/apps.cjs';
import { cliConnections } from '../../scripts/lib/credentials.cjs';
import { tail } from '../../scripts/lib/procs.cjs';

/**
 * Jest globalSetup of the integration tier: migrates every app's schema into this run's own
 * database once, before any spec. `npm test` has created that database (and the run's vhost
 * and Redis key prefix) and built dist/ before Jest starts.
 */
export default async function globalSetup(): Promise<void> {
  const runId = process.env.TEST_RUN_ID;
  if (!runId || !process.env.DATABASE_URL) {
    throw new Error(
      'integration tests run against a database, vhost and key prefix of their own: ' +
        'start them with `npm test` or `npm run test:integration`, not with jest directly',
    );
  }
  assertBuilt(writtenApps());
  const logDir = path.join(ROOT, '.run', `integration-${runId}`);
  fs.mkdirSync(logDir, { recursive: true });

  // One database per Jest worker when the tier runs on several (test/support/worker-env.ts).
  const workers = JSON.parse(process.env.TEST_WORKER_ENVS || '[]') as Record<string, string>[];
  const targets = workers.length
    ? workers
    : [{ DATABASE_URL: process.env.DATABASE_URL, AMQP_URL: process.env.AMQP_URL ?? '' }];
  await Promise.all(
    targets.map((target, i) => migrateAll(target.DATABASE_URL, target.AMQP_URL, logDir, i + 1)),
  );
  const names = targets.map((t) => new URL(t.DATABASE_URL).pathname.slice(1));
  process.stdout.write(`\nintegration: migrated ${writtenApps().join(', ')} into ${names.join(', ')}\n`);
}

async function migrateAll(databaseUrl: string, amqpUrl: string, logDir: string, worker: number) {
  for (const app of writtenApps()) {
    const logFile = path.join(logDir, worker === 1 ? `${app}-migrate.log` : `${app}-migrate-${worker}.log`);
    try {
      // As the owner, granting each app's own role its schema (test/deploy/least-privilege).
      const services = cliConnections(app, { DATABASE_URL: databaseUrl, AMQP_URL: amqpUrl });
      await runCli(app, 'migrate', appEnv({ services, fixed: { PORT: 0 } }), { logFile, timeoutMs: 120_000 });
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${tail(logFile, 30)}`);
    }
  }
}

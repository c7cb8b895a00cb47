#!/usr/bin/env node
// `npm run deliveries -- <command> ...`: the webhook delivery log (list, show, redeliver) against
// DATABASE_URL and AMQP_URL (and REDIS_URL for the config; default: the local sandbox servers), through the built
// `node dist/apps/webhook-dispatcher/src/cli.js deliveries ...`. Builds first when dist/ is missing.
// Run `npm run deliveries -- help` for the commands.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// On another Node than the project's, the script runs again on it (scripts/lib/node.cjs).
await require('./lib/node.cjs').onProjectNode();
const { ROOT, ensureNodeModules } = require('./lib/deps.cjs');
const apps = require('./lib/apps.cjs');
const { DEFAULTS } = require('./lib/services.cjs');

ensureNodeModules((l) => console.error(l));
if (!fs.existsSync(apps.cliJs('webhook-dispatcher'))) {
  const built = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build.mjs')], { stdio: 'inherit' });
  if (built.status !== 0) process.exit(built.status ?? 1);
}
const services = {
  DATABASE_URL: process.env.DATABASE_URL || DEFAULTS.DATABASE_URL,
  AMQP_URL: process.env.AMQP_URL || DEFAULTS.AMQP_URL,
  // The dispatcher's config includes the partners' routes' Redis (the CLI never connects to it).
  REDIS_URL: process.env.REDIS_URL || DEFAULTS.REDIS_URL,
};
// Operator output must stay readable: the CLI's JSON logs go to stderr at warn and above.
const env = apps.appEnv({ services, fixed: { PORT: 0, LOG_LEVEL: process.env.LOG_LEVEL || 'warn' } });
const res = spawnSync(
  process.execPath,
  [apps.cliJs('webhook-dispatcher'), 'deliveries', ...process.argv.slice(2)],
  {
    env,
    stdio: 'inherit',
  },
);
process.exit(res.status ?? 1);

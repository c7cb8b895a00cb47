#!/usr/bin/env node
// `npm run partners -- <command> ...`: partner onboarding against DATABASE_URL, REDIS_URL (or
// REDIS_SENTINELS / REDIS_CLUSTER_NODES) and
// AMQP_URL (default: the local sandbox servers), through the built
// `node dist/apps/auth-server/src/cli.js partners ...`. Builds first when dist/ is missing.
// Run `npm run partners -- help` for the commands.
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
if (!fs.existsSync(apps.cliJs('auth-server'))) {
  const built = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build.mjs')], { stdio: 'inherit' });
  if (built.status !== 0) process.exit(built.status ?? 1);
}
const services = {
  DATABASE_URL: process.env.DATABASE_URL || DEFAULTS.DATABASE_URL,
  // A Sentinel set or a Cluster given instead of REDIS_URL is used as given (exactly one of the three).
  REDIS_URL:
    process.env.REDIS_SENTINELS || process.env.REDIS_CLUSTER_NODES
      ? undefined
      : process.env.REDIS_URL || DEFAULTS.REDIS_URL,
  AMQP_URL: process.env.AMQP_URL || DEFAULTS.AMQP_URL,
};
// Operator output must stay readable: the CLI's JSON logs go to stderr at warn and above.
const env = apps.appEnv({ services, fixed: { PORT: 0, LOG_LEVEL: process.env.LOG_LEVEL || 'warn' } });
const res = spawnSync(process.execPath, [apps.cliJs('auth-server'), 'partners', ...process.argv.slice(2)], {
  env,
  stdio: 'inherit',
});
process.exit(res.status ?? 1);

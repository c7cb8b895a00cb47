#!/usr/bin/env node
// `npm run migrations:run|migrations:revert [-- <app>...]`: runs (or reverts the last of) each
// app's migrations against DATABASE_URL (default: the local sandbox database), through the
// built `node dist/apps/<app>/src/cli.js migrate|migrate:revert`. Builds first.
// `migrations:generate` prints how migrations are written here (TypeORM migration classes
// listed in apps/<app>/src/migrations/index.ts; nothing is generated from entities).
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { ROOT, ensureNodeModules } = require('./lib/deps.cjs');
const { run, red, green } = require('./lib/procs.cjs');
const apps = require('./lib/apps.cjs');
const { DEFAULTS } = require('./lib/services.cjs');

const COMMANDS = { run: 'migrate', revert: 'migrate:revert' };

async function main() {
  const [action, ...rest] = process.argv.slice(2);
  if (action === 'generate') {
    console.log(
      'Migrations are written by hand: add a class implementing MigrationInterface to\n' +
        '  apps/<app>/src/migrations/<timestamp>-<name>.ts\n' +
        "and list it in that folder's index.ts. Each app migrates only its own schema.",
    );
    return;
  }
  const command = COMMANDS[action];
  if (!command) throw new Error('usage: node scripts/migrations.mjs run|revert|generate [app...]');
  const unknown = rest.filter((a) => !apps.NEST_APPS.includes(a));
  if (unknown.length)
    throw new Error(`unknown app: ${unknown.join(', ')} (apps: ${apps.NEST_APPS.join(', ')})`);
  const targets = rest.length ? rest : apps.writtenApps();
  // Reverting undoes the last migration of each app; do it in the reverse order of running.
  if (command === 'migrate:revert') targets.reverse();

  ensureNodeModules((l) => console.log(l));
  const built = await run(process.execPath, [path.join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT });
  if (built.code !== 0) throw new Error('build failed');
  apps.assertBuilt(targets);
  const services = { DATABASE_URL: process.env.DATABASE_URL || DEFAULTS.DATABASE_URL };
  for (const app of targets) {
    console.log(`${command}: ${app}`);
    await apps.runCli(app, command, apps.appEnv({ services, fixed: { PORT: 0 } }), {
      prefix: { name: app, width: 18, colour: 36 },
    });
  }
  console.log(green(`${command}: done`));
}

main().catch((err) => {
  console.error(red(err.message));
  process.exit(1);
});

#!/usr/bin/env node
// `npm run migrations:run|migrations:revert [-- <app>...]`: runs (or reverts the last of) each
// app's migrations against DATABASE_URL (default: the local sandbox database), through the
// built `node dist/apps/<app>/src/cli.js migrate|migrate:revert`. Builds first.
// `migrations:generate -- <app> <camelName>` creates an empty timestamped migration class in
// apps/<app>/src/migrations/ to be written by hand: there are no entities to diff.
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// On another Node than the project's, the script runs again on it (scripts/lib/node.cjs).
await require('./lib/node.cjs').onProjectNode();
const { ROOT, ensureNodeModules } = require('./lib/deps.cjs');
const { run, red, green } = require('./lib/procs.cjs');
const apps = require('./lib/apps.cjs');
const { DEFAULTS } = require('./lib/services.cjs');

const COMMANDS = { run: 'migrate', revert: 'migrate:revert' };

async function main() {
  const [action, ...rest] = process.argv.slice(2);
  if (action === 'generate') return generate(...rest);
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

function generate(app, name) {
  if (!apps.NEST_APPS.includes(app) || !/^[a-z][A-Za-z0-9]*$/.test(name ?? '')) {
    throw new Error(
      `usage: npm run migrations:generate -- <app> <camelName> (apps: ${apps.NEST_APPS.join(', ')})`,
    );
  }
  const timestamp = Date.now();
  const className = `${name[0].toUpperCase()}${name.slice(1)}${timestamp}`;
  const file = path.join(ROOT, 'apps', app, 'src', 'migrations', `${timestamp}-${name}.ts`);
  if (existsSync(file)) throw new Error(`${file} exists already`);
  writeFileSync(
    file,
    `import type { MigrationInterface, QueryRunner } from 'typeorm';

/** TODO: what this migration changes, and why. */
export class ${className} implements MigrationInterface {
  name = '${className}';

  async up(q: QueryRunner): Promise<void> {
    await q.query(\`\`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(\`\`);
  }
}
`,
  );
  console.log(
    green(`created ${path.relative(ROOT, file)}`) +
      `\nWrite its up and down in SQL (schema-qualified, this app's schema only) and list ${className} in` +
      ` apps/${app}/src/migrations/index.ts.`,
  );
}

main().catch((err) => {
  console.error(red(err.message));
  process.exit(1);
});

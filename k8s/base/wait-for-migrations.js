'use strict';
// Init container of every Nest app's Deployment: waits until every migration that this image
// ships is recorded in the app's schema, so a new release never serves before the migrations Job
// (or the CD tool's hook) has migrated the database. An older image (a rollback) passes at once:
// its migrations are a subset of what is applied. It runs with the app's own image and
// DATABASE_URL, from the image's working directory (/app):
//   node /opt/wait-for-migrations/wait-for-migrations.js <app> <schema>
const { createRequire } = require('node:module');
const { join } = require('node:path');

const [app, schema] = process.argv.slice(2);
if (!/^[a-z-]+$/.test(app ?? '') || !/^[a-z_]+$/.test(schema ?? '')) {
  console.error('usage: wait-for-migrations.js <app> <schema>');
  process.exit(64);
}
const fromApp = createRequire(join(process.cwd(), 'package.json'));
fromApp('reflect-metadata');
const { Client } = fromApp('pg');
const shipped = Object.values(fromApp(`./dist/apps/${app}/src/migrations/index.js`))
  .flat()
  .map((Migration) => new Migration().name ?? Migration.name);

const INTERVAL_MS = 5000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function pending() {
  const client = new Client({ connectionString: process.env.DATABASE_URL, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    const { rows } = await client.query(`SELECT name FROM "${schema}"."migrations"`);
    const applied = new Set(rows.map((r) => r.name));
    return shipped.filter((name) => !applied.has(name));
  } catch (err) {
    if (err.code === '42P01' || err.code === '3F000') return shipped; // no table or schema yet
    throw err;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function main() {
  for (let attempt = 0; ; attempt++) {
    try {
      const missing = await pending();
      if (missing.length === 0) {
        console.log(`${app}: all ${shipped.length} migrations of this image are applied`);
        return;
      }
      if (attempt % 6 === 0) console.log(`${app}: waiting for the migrations Job: ${missing.join(', ')}`);
    } catch (err) {
      if (attempt % 6 === 0) console.log(`${app}: database not reachable yet (${err.message})`);
    }
    await sleep(INTERVAL_MS);
  }
}

void main();

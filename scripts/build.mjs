#!/usr/bin/env node
// `npm run build`: compiles apps/ and libs/ with SWC into dist/ (dist/apps/<app>/src/main.js,
// dist/libs/...), builds the docs site (docs/partners → dist/apps/gateway/static), then generates
// the gateway's nginx configuration and static files into
// dist/gateway from the route table (GATEWAY_PORT, DOCS_URL, APP_ENV and the *_UPSTREAMS
// variables of the environment; see apps/gateway).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// On another Node than the project's, the script runs again on it (scripts/lib/node.cjs).
await require('./lib/node.cjs').onProjectNode();
const { ROOT, ensureNodeModules } = require('./lib/deps.cjs');
const { run, red, green } = require('./lib/procs.cjs');
const { GENERATOR_JS } = require('./lib/apps.cjs');

const TESTS = ['**/*.spec.ts', '**/*.integration-spec.ts', '**/*.e2e-spec.ts'];

async function main() {
  ensureNodeModules((l) => console.log(l));
  const dist = path.join(ROOT, 'dist');
  // A clean tree (a migration deleted from the source must not linger in dist and run again),
  // compiled aside and swapped in at once: apps and tests already running from dist/ (another
  // terminal, a benchmark) never see it half-empty.
  const staging = path.join(ROOT, `.dist-staging-${process.pid}`);
  fs.rmSync(staging, { recursive: true, force: true });
  const sources = ['apps', 'libs'].filter((d) => fs.existsSync(path.join(ROOT, d)));
  const swc = path.join(ROOT, 'node_modules', '.bin', 'swc');
  const compiled = await run(
    swc,
    [
      ...sources,
      '-d',
      path.relative(ROOT, staging),
      '--copy-files',
      '--ignore',
      TESTS.join(','),
      '--config-file',
      '.swcrc',
    ],
    { cwd: ROOT },
  );
  if (compiled.code !== 0) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw new Error(`swc failed (exit ${compiled.code ?? compiled.signal})`);
  }
  const stagedGenerator = path.join(staging, path.relative(dist, GENERATOR_JS));
  if (!fs.existsSync(stagedGenerator)) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw new Error(
      `${path.relative(ROOT, GENERATOR_JS)} was not produced: apps/gateway/src/generate.ts is missing`,
    );
  }
  // The docs site the gateway serves under /docs/ (guides, error pages, the Redoc reference page).
  const site = await run(
    process.execPath,
    [
      path.join(staging, 'apps', 'gateway', 'src', 'site', 'build-site.js'),
      '--out',
      path.join(staging, 'apps', 'gateway', 'static'),
      '--source',
      path.join(ROOT, 'docs', 'partners'),
    ],
    { cwd: ROOT },
  );
  if (site.code !== 0) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw new Error(`docs site build failed (exit ${site.code ?? site.signal})`);
  }
  const retired = path.join(ROOT, `.dist-retired-${process.pid}`);
  if (fs.existsSync(dist)) fs.renameSync(dist, retired);
  fs.renameSync(staging, dist);
  fs.rmSync(retired, { recursive: true, force: true });
  const out = path.join(dist, 'gateway');
  // The local build's gateway is the sandbox's unless the caller says otherwise (the apps and the
  // generator themselves default to production).
  const gen = await run(process.execPath, [GENERATOR_JS, '--out', out], {
    cwd: ROOT,
    env: { ...process.env, APP_ENV: process.env.APP_ENV || 'sandbox' },
  });
  if (gen.code !== 0) throw new Error(`gateway generator failed (exit ${gen.code ?? gen.signal})`);
  console.log(green(`build: dist/ ready (gateway configuration in ${path.relative(ROOT, out)})`));
}

main().catch((err) => {
  console.error(red(`build failed: ${err.message}`));
  process.exit(1);
});

#!/usr/bin/env node
// `npm run test:faults`: the fault matrix (test/faults). Under steady mixed load through the
// gateway, Redis, RabbitMQ and PostgreSQL are stopped and started one at a time; the matrix's
// servers are its own (free ports, data under .run/faults-*), never the shared ones on the
// default ports. Builds first, then runs the Jest project `faults`; figures go to
// bench/results/faults-<time>.json and a table on stdout. Then the failover drills
// (test/faults/*.drill-spec.ts, too long for `npm test`): a PostgreSQL point-in-time restore, a
// Redis primary killed behind Sentinel, a RabbitMQ node of a three-node cluster stopped.
//   FAULTS_PROFILE=full|short   (default full: 10 s outages; short: the version `npm test` runs)
//   FAULTS_SUITES=all|matrix|drills   (default all)
//   FAULTS_KEEP=1               keep .run/faults-* (server logs) afterwards
//   extra arguments go to Jest (both runs; a path that selects nothing in one of them is fine)
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// On another Node than the project's, the script runs again on it (scripts/lib/node.cjs).
await require('./lib/node.cjs').onProjectNode();
const { ROOT, ensureNodeModules } = require('./lib/deps.cjs');
const { run, which, red } = require('./lib/procs.cjs');

ensureNodeModules(console.log);
const missing = ['nginx', 'redis-server', 'rabbitmq-server'].filter((b) => !which(b));
if (missing.length) {
  console.error(red(`faults: missing ${missing.join(', ')} (npm test or npm start installs them)`));
  process.exit(1);
}

const build = await run(process.execPath, [path.join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT });
if (build.code !== 0) process.exit(build.code ?? 1);

// The apps get the private servers' URLs from the test (startSystem's env); these placeholders
// only satisfy the harness's check and point nowhere, so nothing can reach a shared server.
const env = {
  ...process.env,
  TEST_RUN_ID: process.env.TEST_RUN_ID || `faults-${Date.now().toString(36)}`,
  FAULTS_PROFILE: process.env.FAULTS_PROFILE || 'full',
  DATABASE_URL: 'postgres://unused:unused@127.0.0.1:1/unused',
  REDIS_URL: 'redis://127.0.0.1:1',
  AMQP_URL: 'amqp://unused:unused@127.0.0.1:1/',
};
const SUITES = process.env.FAULTS_SUITES || 'all';
if (!['all', 'matrix', 'drills'].includes(SUITES)) {
  console.error(red(`faults: FAULTS_SUITES is all, matrix or drills, not ${SUITES}`));
  process.exit(1);
}
let child;
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child?.stop(10000));
const jest = (selection) =>
  run(
    process.execPath,
    [
      path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'),
      ...selection,
      '--runInBand',
      '--forceExit',
      '--passWithNoTests',
      ...process.argv.slice(2),
    ],
    { cwd: ROOT, env, onStart: (h) => (child = h) },
  );
// Both run even when the first fails; the first failure's code is the script's.
const codes = [];
if (SUITES !== 'drills') codes.push((await jest(['--selectProjects', 'faults'])).code ?? 1);
if (SUITES !== 'matrix') codes.push((await jest(['--selectProjects', 'drills'])).code ?? 1);
process.exit(codes.find((c) => c !== 0) ?? 0);

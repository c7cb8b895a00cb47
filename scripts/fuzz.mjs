#!/usr/bin/env node
// `npm run fuzz`: hostile input through the gateway (test/fuzz). Requests are drawn from the
// OpenAPI description and mutated; every answer must be a non-5xx within 10 s that the
// description allows. Runs `npm test`'s fuzz stage (its provisioning, build and per-run database,
// vhost and key prefix) with a long profile; prints counts by operation and status, and the
// findings; writes the summary to test/fuzz/results/fuzz-<time>.json; exits non-zero on a finding.
//   --requests N   how many requests (default 100000)
//   --seed S       the seed of the sequence (default 20261125; a finding names its request index)
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// On another Node than the project's, the script runs again on it (scripts/lib/node.cjs).
await require('./lib/node.cjs').onProjectNode();
const { ROOT } = require('./lib/deps.cjs');
const { run } = require('./lib/procs.cjs');

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const value = Number(process.argv[i + 1]);
  if (!Number.isSafeInteger(value) || value < 1) {
    console.error(`usage: npm run fuzz -- [--requests N] [--seed S]  (--${name} must be a positive integer)`);
    process.exit(64);
  }
  return value;
}

const requests = option('requests', 100_000);
const seed = option('seed', 20_261_125);
let child;
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child?.stop(10_000));
const res = await run(process.execPath, [path.join(ROOT, 'scripts', 'test.mjs'), '--only', 'fuzz'], {
  cwd: ROOT,
  env: {
    ...process.env,
    FUZZ_REQUESTS: String(requests),
    FUZZ_SEED: String(seed),
    FUZZ_RESULTS_DIR: process.env.FUZZ_RESULTS_DIR || 'test/fuzz/results',
    // At worst ~20 requests/s, plus start-up.
    FUZZ_STAGE_LIMIT_S: String(600 + Math.ceil(requests / 20)),
  },
  onStart: (h) => (child = h),
});
process.exit(res.code ?? 1);

#!/usr/bin/env node
// `npm test`: everything CI checks, on a fresh machine or a laptop.
//   provisioning (npm packages; PostgreSQL, Redis, RabbitMQ, nginx, prometheus: found or started, see
//   scripts/lib/services.cjs) -> a database, RabbitMQ vhost and Redis key prefix of this run
//   only -> typecheck -> lint -> build -> unit -> integration -> e2e -> faults -> fuzz -> clean-up.
// The faults stage is the fault matrix's short profile (FAULTS_PROFILE=short: one outage of each
// of Redis, RabbitMQ and PostgreSQL, on servers of its own); `npm run test:faults` runs it in full.
// The fuzz stage sends a few thousand hostile requests through the gateway (test/fuzz), from a new
// seed each run, which it prints (`npm run fuzz -- --seed N` replays it); `npm run fuzz` runs 100,000. It comes last: its requests change this run's sandbox data.
// Every stage runs even when an earlier one failed. The very last line is
//   tests: N passed, M failed
// summed from Jest's JSON results (a suite that failed without a failing test, a failed
// typecheck, lint or build, and a tier without its JSON file count as failures too); the exit
// code is non-zero on any failure.
//   --only unit|integration|e2e|faults|fuzz   just that tier (plus the build and services it needs)
//   --only <tier> -- <paths…>     only those test files of that tier (paths go to Jest)
// Environment: SVC_KEEP_SERVICES=1 leaves servers this run started running even under CI;
// SVC_STOP_SERVICES=1 stops them outside CI too (the default outside CI keeps them for speed).
import { randomInt } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// On another Node than the project's, the script runs again on it (scripts/lib/node.cjs).
await require('./lib/node.cjs').onProjectNode();
const { ROOT, ensureNodeModules, folderProblem } = require('./lib/deps.cjs');
const { run, red, green, yellow, bold } = require('./lib/procs.cjs');

const TIERS = ['unit', 'integration', 'e2e', 'faults', 'fuzz'];
const RUN_DIR = path.join(ROOT, '.run');
const bin = (name) => path.join(ROOT, 'node_modules', '.bin', name);
const say = (line) => console.log(line);

// Stage time limits; the whole run normally takes a few minutes.
// `npm run fuzz` sets FUZZ_STAGE_LIMIT_S for its long run.
const LIMITS = {
  typecheck: 300,
  lint: 300,
  build: 180,
  unit: 480,
  integration: 720,
  e2e: 720,
  faults: 480,
  fuzz: Number(process.env.FUZZ_STAGE_LIMIT_S) || 240,
};

const results = []; // { stage, passed, failed, note }
let current = null; // handle of the running stage process
let interrupted = false;
let resources = null; // per-run database/vhost/prefix
const workerResources = []; // the same for each further Jest worker of a tier
let servers = null; // provisioning result

function parseArgs(argv) {
  const dash = argv.indexOf('--');
  const paths = dash < 0 ? [] : argv.slice(dash + 1);
  const own = dash < 0 ? argv : argv.slice(0, dash);
  const i = own.indexOf('--only');
  if (i < 0 && paths.length === 0) return { tiers: TIERS, checks: true, paths };
  const tier = own[i + 1];
  if (i < 0 || !TIERS.includes(tier)) {
    console.error(`usage: node scripts/test.mjs [--only ${TIERS.join('|')} [-- <test paths>]]`);
    process.exit(64);
  }
  return { tiers: [tier], checks: false, paths };
}

function header(stage) {
  say(`\n${bold(`==== ${stage} ${'='.repeat(Math.max(0, 60 - stage.length))}`)}`);
}

async function stage(name, cmd, args, env) {
  header(name);
  if (interrupted) return { code: 130 };
  const res = await run(cmd, args, {
    cwd: ROOT,
    env,
    timeoutMs: LIMITS[name] * 1000,
    onStart: (h) => (current = h),
  });
  current = null;
  return res;
}

/** A non-Jest stage: one failure when it fails, nothing counted when it passes. */
async function checkStage(name, cmd, args, env) {
  const res = await stage(name, cmd, args, env);
  const ok = res.code === 0;
  results.push({ stage: name, passed: 0, failed: ok ? 0 : 1, note: ok ? 'ok' : failNote(res) });
}

function failNote(res) {
  if (res.timedOut) return 'timed out';
  if (res.error) return res.error.message;
  return `exit ${res.code ?? res.signal}`;
}

function hasEslintConfig() {
  return ['js', 'mjs', 'cjs', 'ts', 'mts', 'cts'].some((ext) =>
    fs.existsSync(path.join(ROOT, `eslint.config.${ext}`)),
  );
}

/** Counts from Jest's --json output; see the header for what counts as a failure. */
function countJest(file, res) {
  if (!fs.existsSync(file))
    return { passed: 0, failed: 1, note: `no ${path.relative(ROOT, file)} (${failNote(res)})` };
  let report;
  try {
    report = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    return { passed: 0, failed: 1, note: `unreadable ${path.relative(ROOT, file)}: ${err.message}` };
  }
  let passed = report.numPassedTests || 0;
  let failed = report.numFailedTests || 0;
  const broken = (report.testResults || []).filter(
    (s) => s.status === 'failed' && !(s.assertionResults || []).some((a) => a.status === 'failed'),
  );
  failed += broken.length;
  const notes = broken.map((s) => `suite failed: ${path.relative(ROOT, s.name)}`);
  if (res.code !== 0 && failed === 0) {
    failed = 1;
    notes.push(`jest ${failNote(res)}`);
  }
  if (report.numTotalTests === 0) notes.push('no tests');
  return { passed, failed, note: notes.join('; ') || (failed ? '' : 'ok') };
}

async function jestStage(tier, env, paths) {
  const file = path.join(RUN_DIR, `jest-${tier}.json`);
  fs.rmSync(file, { force: true });
  const args = [
    path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'),
    '--selectProjects',
    tier,
    '--json',
    '--outputFile',
    file,
    '--passWithNoTests',
  ];
  let tierEnv = env;
  if (tier === 'unit') {
    args.push(`--maxWorkers=${tierWorkers(tier, env)}`);
  } else {
    // Several Jest workers, each on a database, vhost and key prefix of its own
    // (test/support/worker-env.ts); a few chosen files run on one.
    const workers = paths.length ? 1 : tierWorkers(tier, env);
    if (workers > 1) {
      const envs = [resources.env];
      for (let i = 2; i <= workers; i++) {
        const extra = await createWorkerResources(i);
        workerResources.push(extra);
        envs.push(extra.env);
      }
      tierEnv = { ...env, TEST_WORKER_ENVS: JSON.stringify(envs) };
      args.push(`--maxWorkers=${workers}`, '--forceExit');
    } else {
      args.push('--runInBand', '--forceExit');
    }
  }
  args.push(...paths);
  // The e2e tier runs two processes of every app behind the gateway (test/support/system.ts).
  if (tier === 'e2e') tierEnv = { ...tierEnv, E2E_REPLICAS: env.E2E_REPLICAS || '2' };
  const res = await stage(tier, process.execPath, args, tierEnv);
  const counted = countJest(file, res);
  results.push({ stage: tier, ...counted });
}

/**
 * How many Jest workers a tier runs on: UNIT_WORKERS / INTEGRATION_WORKERS / E2E_WORKERS, else one
 * per core for the unit tier (pure CPU; Jest's own default leaves a core idle: 84 s against 53 s on
 * 2 cores), 2 for the integration tier (its files mostly wait on PostgreSQL, Redis and RabbitMQ)
 * and 1 for e2e (each file already runs two processes of every app).
 */
function tierWorkers(tier, env) {
  const set = Number(env[`${tier.toUpperCase()}_WORKERS`]);
  if (Number.isInteger(set) && set >= 1) return set;
  if (tier === 'unit') return os.availableParallelism();
  return tier === 'integration' ? 2 : 1;
}

function createWorkerResources(worker) {
  const { createRunResources } = require('./lib/isolation.cjs');
  return createRunResources(servers.env, { runId: `${resources.runId}w${worker}`, log: say });
}

/** Browser tests (Chromium) are wanted once the project depends on a driver for them. */
function wantsChromium() {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const deps = { ...pkg.dependencies, ...pkg.devDependencies };
  return ['playwright-core', 'playwright', 'puppeteer-core', '@playwright/test'].some((d) => d in deps);
}

/**
 * What the fault matrix needs to run private PostgreSQL, Redis and RabbitMQ servers: the local
 * binaries (on Debian the provisioning installs them; with Docker-only services they are absent).
 */
function faultsMissing() {
  const { which } = require('./lib/procs.cjs');
  const pg = '/usr/lib/postgresql';
  const hasInitdb =
    fs.existsSync(pg) && fs.readdirSync(pg).some((v) => fs.existsSync(path.join(pg, v, 'bin', 'initdb')));
  return [
    hasInitdb ? null : 'PostgreSQL (initdb)',
    which('redis-server') ? null : 'redis-server',
    fs.existsSync('/usr/lib/rabbitmq/bin/rabbitmq-server') ? null : 'rabbitmq-server',
  ].filter(Boolean);
}

/**
 * The fault matrix's private PostgreSQL runs as the `postgres` user when this is root, with its data
 * in a folder under the system's temp folder (the checkout may sit where that user cannot enter).
 * Resolves why that cannot work, or ''.
 */
function faultsFolderProblem() {
  if (process.getuid?.() !== 0) return '';
  const { capture } = require('./lib/procs.cjs');
  const tmp = os.tmpdir();
  const probe = capture('runuser', ['-u', 'postgres', '--', 'test', '-x', tmp], { timeoutMs: 10000 });
  return probe.status === 0
    ? ''
    : `the fault tests' PostgreSQL runs as the postgres user, who cannot enter ${tmp}: set TMPDIR to a folder it can enter, such as /tmp`;
}

function shouldStopServers() {
  if (process.env.SVC_KEEP_SERVICES === '1') return false;
  return process.env.SVC_STOP_SERVICES === '1' || Boolean(process.env.CI);
}

async function cleanUp() {
  while (workerResources.length) await workerResources.pop().cleanup();
  if (resources) {
    await resources.cleanup();
    resources = null;
  }
  if (servers) {
    if (shouldStopServers()) await servers.stopStarted();
    else if (servers.started.length)
      say(`services: left running for the next run: ${servers.started.map((s) => s.name).join(', ')}`);
    servers = null;
  }
}

function summary() {
  const passed = results.reduce((n, r) => n + r.passed, 0);
  const failed = results.reduce((n, r) => n + r.failed, 0);
  header('summary');
  for (const r of results) {
    const counts = r.passed || r.failed ? `${r.passed} passed, ${r.failed} failed` : '';
    const colour = r.failed ? red : r.note.startsWith('skipped') ? yellow : green;
    say(`  ${r.stage.padEnd(12)} ${colour([counts, r.note].filter(Boolean).join('  '))}`);
  }
  return { passed, failed };
}

async function finish() {
  await cleanUp().catch((err) => say(red(`clean-up: ${err.message}`)));
  const { passed, failed } = summary();
  process.stdout.write(`tests: ${passed} passed, ${failed} failed\n`, () =>
    process.exit(failed || interrupted ? 1 : 0),
  );
}

async function main() {
  const { tiers, checks, paths } = parseArgs(process.argv.slice(2));
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.on(sig, () => {
      if (interrupted) return;
      interrupted = true;
      say(yellow(`\ntest: ${sig}: stopping the current stage and cleaning up`));
      results.push({ stage: 'interrupted', passed: 0, failed: 1, note: sig });
      if (current) current.stop(5000);
    });
  }
  header('setup');
  const folder = folderProblem();
  if (folder) {
    say(red(`test: ${folder}`));
    results.push({ stage: 'setup', passed: 0, failed: 1, note: folder });
    return;
  }
  try {
    ensureNodeModules(say);
  } catch (err) {
    results.push({ stage: 'npm ci', passed: 0, failed: 1, note: err.message });
    return;
  }
  // Dependencies may be required from here on.
  const { provision } = require('./lib/services.cjs');
  const { createRunResources } = require('./lib/isolation.cjs');

  const needsServices = tiers.some((t) => t !== 'unit');
  let env = { ...process.env };
  if (tiers.includes('unit')) {
    // The deployment test renders the kustomize overlays.
    try {
      env.KUBECTL = require('./lib/kubectl.cjs').ensureKubectl({ log: say });
    } catch (err) {
      say(red(`kubectl: ${err.message}`));
    }
    // The gateway config test runs `nginx -t`, the alert tests promtool (test/monitoring/rules.spec.ts).
    try {
      env = { ...env, ...require('./lib/services.cjs').ensureUnitTools({ log: say }) };
    } catch (err) {
      say(red(`unit tools: ${err.message}`));
    }
  }
  if (needsServices) {
    try {
      servers = await provision({ log: say, chromium: wantsChromium() });
      resources = await createRunResources(servers.env, { log: say });
      env = { ...env, ...servers.env, ...resources.env };
      const faults = tiers.includes('faults') ? faultsFolderProblem() : '';
      if (faults) {
        say(red(`test: ${faults}`));
        results.push({ stage: 'setup', passed: 0, failed: 1, note: faults });
        return;
      }
    } catch (err) {
      say(red(`setup failed: ${err.message}`));
      results.push({ stage: 'services', passed: 0, failed: 1, note: err.message.split('\n')[0] });
    }
  }

  if (checks) {
    await checkStage('typecheck', bin('tsc'), ['-p', 'tsconfig.json', '--noEmit'], env);
    if (hasEslintConfig()) {
      await checkStage('lint', bin('eslint'), ['.'], env);
    } else {
      header('lint');
      say(yellow('lint: no eslint.config.* yet; skipped'));
      results.push({ stage: 'lint', passed: 0, failed: 0, note: 'skipped (no eslint config)' });
    }
  }
  if (needsServices || checks)
    await checkStage('build', process.execPath, [path.join(ROOT, 'scripts', 'build.mjs')], env);
  for (const tier of tiers) {
    if (tier !== 'unit' && results.some((r) => r.stage === 'services' && r.failed)) {
      results.push({ stage: tier, passed: 0, failed: 1, note: 'not run: services unavailable' });
      continue;
    }
    if (tier === 'faults') {
      const missing = faultsMissing();
      if (missing.length) {
        header('faults');
        say(
          yellow(
            `faults: skipped, the fault matrix starts servers of its own and needs ${missing.join(', ')}`,
          ),
        );
        results.push({ stage: 'faults', passed: 0, failed: 0, note: `skipped (no ${missing.join(', ')})` });
        continue;
      }
    }
    let tierEnv = tier === 'faults' ? { FAULTS_PROFILE: 'short', ...env } : env;
    if (tier === 'fuzz') {
      // A new seed each run (unless `npm run fuzz -- --seed N` names one), printed so that a
      // finding can be replayed with that command.
      const seed = env.FUZZ_SEED || String(randomInt(1, 2 ** 31));
      say(`fuzz: seed ${seed} (replay: npm run fuzz -- --seed ${seed})`);
      tierEnv = { ...env, FUZZ_SEED: seed };
    }
    await jestStage(tier, tierEnv, paths);
  }
}

main()
  .catch((err) => {
    say(red(`test: ${err.stack || err.message}`));
    results.push({ stage: 'runner', passed: 0, failed: 1, note: err.message });
  })
  .finally(finish);

#!/usr/bin/env node
// `npm run bench [-- http|oauth|crew|sponsorship|webhooks|limiter]`. The named ones: see scripts/bench/<name>.mjs.
// `http` (the default): what one request costs on the way through the foundation, as ratios to a bare
// Fastify JSON route measured in the same run (absolute numbers vary by machine; ratios much less).
//   bare      Fastify alone                                   (baseline = 1.00)
//   platform  the route inside createHttpApp (every app's HTTP stack)
//   gateway   the platform app behind the generated nginx gateway
// Options: BENCH_SECONDS (5), BENCH_CONCURRENCY (32), BENCH_ROUNDS (2; the best round counts).
// Results go to bench/results/http-<time>.json.
import { execFileSync, fork, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// On another Node than the project's, the script runs again on it (scripts/lib/node.cjs).
await require('./lib/node.cjs').onProjectNode();
const { ROOT, ensureNodeModules } = require('./lib/deps.cjs');
const { which } = require('./lib/procs.cjs');
const { nginxArgs } = require('./lib/apps.cjs');
const { freePort, waitForHttpOk } = require('./lib/net.cjs');
ensureNodeModules((l) => console.log(l));

const SECONDS = process.env.BENCH_SECONDS ?? '5';
const CONCURRENCY = process.env.BENCH_CONCURRENCY ?? '32';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? '2');
const children = [];
const tempDirs = [];

function startServer(kind, port) {
  return new Promise((resolve, reject) => {
    const child = fork(path.join(ROOT, 'scripts/bench/servers.cjs'), [kind, String(port)], {
      stdio: 'inherit',
    });
    children.push(child);
    child.once('message', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`${kind} server exited (${code})`)));
  });
}

function load(url) {
  const out = execFileSync(
    process.execPath,
    [path.join(ROOT, 'scripts/bench/load.cjs'), url, SECONDS, CONCURRENCY],
    {
      encoding: 'utf8',
    },
  );
  return JSON.parse(out);
}

async function main() {
  const nginx = process.env.NGINX_BIN || which('nginx');
  if (!nginx) throw new Error('nginx is not installed: run `npm start` or `npm test` once, which install it');

  const [barePort, platformPort, gatewayPort] = [await freePort(), await freePort(), await freePort()];
  await startServer('bare', barePort);
  await startServer('platform', platformPort);
  const gatewayDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-gw-'));
  tempDirs.push(gatewayDir);
  execFileSync(
    process.execPath,
    [path.join(ROOT, 'dist/apps/gateway/src/generate.js'), '--out', gatewayDir],
    {
      env: {
        ...process.env,
        // Without it the generator applies production's rules (a public base URL is required).
        APP_ENV: 'sandbox',
        GATEWAY_PORT: String(gatewayPort),
        GATEWAY_LISTEN_HOST: '127.0.0.1',
        CREW_API_UPSTREAMS: `127.0.0.1:${platformPort}`,
        GATEWAY_WORKER_PROCESSES: '1',
      },
      stdio: 'inherit',
    },
  );
  const gw = spawn(nginx, nginxArgs(gatewayDir), {
    stdio: ['ignore', fs.openSync(path.join(gatewayDir, 'out.log'), 'a'), 'inherit'],
  });
  children.push(gw);
  await waitForHttpOk(`http://127.0.0.1:${gatewayPort}/healthz`, { timeoutMs: 15000 });

  const targets = {
    bare: `http://127.0.0.1:${barePort}/v1/me`,
    platform: `http://127.0.0.1:${platformPort}/v1/me`,
    gateway: `http://127.0.0.1:${gatewayPort}/v1/me`,
  };
  for (const url of Object.values(targets)) load(url); // warm-up round
  const best = {};
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [name, url] of Object.entries(targets)) {
      const result = load(url);
      if (result.errors > 0) throw new Error(`${name}: ${result.errors} failed requests`);
      if (!best[name] || result.rps > best[name].rps) best[name] = result;
    }
  }
  const base = best.bare.rps;
  const when = new Date().toISOString();
  const dir = path.join(ROOT, 'bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `http-${when.replace(/[:.]/g, '-')}.json`);
  const results = Object.entries(best).map(([name, r]) => ({
    name,
    ...r,
    ratio_to_bare: Number((r.rps / base).toFixed(3)),
  }));
  fs.writeFileSync(
    file,
    `${JSON.stringify({ when, concurrency: Number(CONCURRENCY), seconds: Number(SECONDS), rounds: ROUNDS, cpus: os.cpus().length, results }, null, 2)}\n`,
  );
  console.log(
    `\nGET /v1/me, ${CONCURRENCY} keep-alive clients, ${SECONDS} s per round, best of ${ROUNDS} (results: ${path.relative(ROOT, file)})`,
  );
  console.log('target     req/s   ratio   p50 ms   p99 ms');
  for (const [name, r] of Object.entries(best)) {
    console.log(
      `${name.padEnd(9)} ${String(r.rps).padStart(6)}   ${(r.rps / base).toFixed(2).padStart(5)}   ${String(r.p50_ms).padStart(6)}   ${String(r.p99_ms).padStart(6)}`,
    );
  }
  console.log(
    `gateway hop keeps ${((best.gateway.rps / best.platform.rps) * 100).toFixed(0)} % of the platform app's throughput`,
  );
}

async function selected() {
  const which = process.argv[2] ?? 'http';
  // Always from the source as it is: a dist/ left by an earlier checkout would measure other code.
  execFileSync(process.execPath, [path.join(ROOT, 'scripts/build.mjs')], { stdio: 'inherit' });
  if (which === 'http') return main();
  if (which === 'oauth') {
    const { benchOAuth } = await import('./bench/oauth.mjs');
    await benchOAuth();
    return;
  }
  if (which === 'crew') {
    const { benchCrew } = await import('./bench/crew.mjs');
    await benchCrew();
    return;
  }
  if (which === 'sponsorship') {
    const { benchSponsorship } = await import('./bench/sponsorship.mjs');
    await benchSponsorship();
    return;
  }
  if (which === 'webhooks') {
    const { benchWebhooks } = await import('./bench/webhooks.mjs');
    await benchWebhooks();
    return;
  }
  if (which === 'limiter') {
    const { benchLimiter } = await import('./bench/limiter.mjs');
    await benchLimiter();
    return;
  }
  throw new Error(`unknown bench ${which}: use http, oauth, crew, sponsorship, webhooks or limiter`);
}

selected()
  .catch((err) => {
    console.error(`bench failed: ${err.message}`);
    process.exitCode = 1;
  })
  .finally(() => {
    for (const c of children) c.kill('SIGTERM');
    setTimeout(() => tempDirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })), 500);
    // A bench that failed mid-round can leave a handle open (a load worker, a child's channel):
    // the run is over either way, so it must not hang.
    setTimeout(() => process.exit(), 2000).unref();
  });

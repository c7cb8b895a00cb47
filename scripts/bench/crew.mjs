// `npm run bench -- crew`: the crew-data API under load, in an isolated database, vhost and Redis
// prefix. Scenarios run interleaved (round after round), each with autocannon (50 connections):
//   baseline      a bare Fastify JSON route (same machine, same moment)
//   layers        the same route in a plain Nest app on Fastify, and in the platform's HTTP stack
//                 (createHttpApp: request id, request context, access line, metrics): what Nest and the
//                 platform cost before /v1/me's own work (token and limits, lookup, validators)
//   me direct     GET /v1/me on crew-api with a cached token
//   me gateway    the same through the nginx gateway
//   me 304        GET /v1/me with If-None-Match (revalidation)
//   vessels page  GET /v1/me/vessels?limit=50 (alex.morgan's 120 periods)
//   vessels 304   the same with If-None-Match (revalidation of an unchanged history)
//   sea-time      GET /v1/me/sea-time (alex.morgan's totals), and the same with If-None-Match
//   peer          GET /v1/me built the way the NestJS documentation teaches (bench/peer/crew-me-peer.ts:
//                 passport-http-bearer over Redis, @nestjs/throttler with Redis storage, TypeORM findOne),
//                 on the same database and Redis; the report prints crew-api's ratio to it
//   traced 100 %  GET /v1/me on a second crew-api exporting every trace (OTEL_TRACES_SAMPLER=
//                 traceidratio, arg 1) to a local OTLP sink that discards them (otlp-sink.cjs)
//   traced 1 %    the same on a third crew-api keeping 1 % of traces (arg 0.01)
// The "direct" scenario is the same app with tracing off (OTEL_EXPORTER_OTLP_ENDPOINT unset).
// For each: requests/s, p50, p99, the ratio to the baseline, and CPU µs per request of the app
// processes (crew-api; plus nginx for the gateway) and Redis, and of PostgreSQL, read from /proc. Results go to
// bench/results/crew-<time>.json. BENCH_SECONDS (4), BENCH_ROUNDS (3), BENCH_CONNECTIONS (50);
// BENCH_PROFILE=1 writes crew-api's CPU profile to bench/profiles/crew-api.cpuprofile;
// BENCH_ONLY=<regex> keeps the baseline and the scenarios whose name matches (BENCH_ONLY=direct).
// BENCH_BASELINE_DIST=<another build's dist/> (e.g. an earlier commit's) adds that build's crew-api,
// loaded in the same rounds as this one's (direct /v1/me, the vessel-history and sea-time scenarios), and prints this
// build's as a ratio of it;
// BENCH_BASELINE_LABEL (e.g. its commit) names that build in the results.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, fork, spawn } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const autocannon = require('autocannon');
const { ROOT } = require('../lib/deps.cjs');
const apps = require('../lib/apps.cjs');
const { onboardPartner } = require('./partners.cjs');
const { which } = require('../lib/procs.cjs');
const { childrenOf, cpuMicros, postgresCpuFrom } = require('./procstat.cjs');
const { freePort, waitForHttpOk, redisCommands } = require('../lib/net.cjs');
const { provision } = require('../lib/services.cjs');
const { createRunResources } = require('../lib/isolation.cjs');
const { appBrokerUrl } = require('../lib/credentials.cjs');
const { AUTH_AUTHORIZE_DECIDE, SANDBOX_MEMBERS } = require(path.join(ROOT, 'dist/libs/contracts/src'));

const SECONDS = Number(process.env.BENCH_SECONDS ?? '4');
const PROFILE = process.env.BENCH_PROFILE === '1';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? '3');
const BASELINE_DIST = process.env.BENCH_BASELINE_DIST
  ? path.resolve(process.env.BENCH_BASELINE_DIST)
  : undefined;
const BASELINE_BUILD = 'GET /v1/me direct, baseline build';
const VESSELS_PAGE = 'GET /v1/me/vessels page';
const VESSELS_304 = 'GET /v1/me/vessels 304 revalidation';
const NEST_ROUTE = 'layer: the route in plain Nest';
const PLATFORM_ROUTE = "layer: the route in the platform's stack";
const SEA_TIME = 'GET /v1/me/sea-time totals';
const SEA_TIME_304 = 'GET /v1/me/sea-time 304 revalidation';
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? '50');

function run(url, headers) {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: CONNECTIONS, duration: SECONDS, headers }, (err, result) =>
      err ? reject(err) : resolve(result),
    );
  });
}

export async function benchCrew() {
  const children = [];
  let resources;
  try {
    const servers = await provision({ log: (l) => console.error(l) });
    resources = await createRunResources(servers.env, { log: (l) => console.error(l) });
    const [
      authPort,
      crewPort,
      gatewayPort,
      barePort,
      peerPort,
      tracedPort,
      sampledPort,
      sinkPort,
      olderPort,
      nestPort,
      platformPort,
    ] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    const common = {
      services: { ...servers.env, ...resources.env },
      fixed: {
        APP_ENV: 'sandbox',
        LOG_LEVEL: 'info',
        // Each scenario is its own partner; the limiter runs (one Lua call per request) but never refuses.
        RATE_LIMIT_PER_MINUTE: 1_000_000,
        RATE_LIMIT_PER_DAY: 1_000_000,
      },
    };
    const database = new URL(resources.env.DATABASE_URL).pathname.slice(1);
    // Tracing is off unless a scenario turns it on, whatever the caller's environment says.
    const envFor = (port, tracing = { OTEL_EXPORTER_OTLP_ENDPOINT: '' }) =>
      apps.appEnv({ ...common, fixed: { ...common.fixed, ...tracing, PORT: port } });
    const tracingAt = (ratio) => ({
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sinkPort}`,
      OTEL_TRACES_SAMPLER: 'traceidratio',
      OTEL_TRACES_SAMPLER_ARG: String(ratio),
    });
    for (const app of ['auth-server', 'crew-api']) {
      await apps.runCli(app, 'migrate', envFor(0));
      await apps.runCli(app, 'seed', envFor(0));
    }
    const profileDir = path.join(ROOT, 'bench', 'profiles');
    const sink = fork(path.join(ROOT, 'scripts/bench/otlp-sink.cjs'), [String(sinkPort)], {
      stdio: 'inherit',
    });
    children.push(sink);
    await new Promise((resolve) => sink.once('message', resolve));
    const start = (app, port, tracing, main = apps.mainJs(app)) => {
      // BENCH_PROFILE=1: each crew-api writes a V8 CPU profile (chrome://inspect, or any .cpuprofile
      // viewer): crew-api.cpuprofile untraced, crew-api-traced-<ratio>.cpuprofile for the traced ones.
      const name = tracing ? `crew-api-traced-${tracing.OTEL_TRACES_SAMPLER_ARG}` : 'crew-api';
      const profile =
        PROFILE && app === 'crew-api'
          ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${name}.cpuprofile`]
          : [];
      const child = spawn(process.execPath, [...profile, main], {
        // Each app as its own broker user: RPC is answered to the callers a contract names.
        env: { ...envFor(port, tracing), AMQP_URL: appBrokerUrl(app, common.services.AMQP_URL) },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      children.push(child);
      return child;
    };
    start('auth-server', authPort);
    const crew = start('crew-api', crewPort);
    const traced = start('crew-api', tracedPort, tracingAt(1));
    const sampled = start('crew-api', sampledPort, tracingAt(0.01));
    const older = BASELINE_DIST
      ? start('crew-api', olderPort, undefined, path.join(BASELINE_DIST, 'apps/crew-api/src/main.js'))
      : undefined;
    await waitForHttpOk(`http://127.0.0.1:${authPort}/readyz`, { timeoutMs: 60000 });
    for (const port of [crewPort, tracedPort, sampledPort, ...(older ? [olderPort] : [])]) {
      await waitForHttpOk(`http://127.0.0.1:${port}/readyz`, { timeoutMs: 60000 });
    }

    const gatewayDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-crew-gw-'));
    execFileSync(process.execPath, [apps.GENERATOR_JS, '--out', gatewayDir], {
      env: {
        ...process.env,
        // Without it the generator applies production's rules (a public base URL is required).
        APP_ENV: 'sandbox',
        GATEWAY_PORT: String(gatewayPort),
        GATEWAY_LISTEN_HOST: '127.0.0.1',
        CREW_API_UPSTREAMS: `127.0.0.1:${crewPort}`,
        AUTH_SERVER_UPSTREAMS: `127.0.0.1:${authPort}`,
        GATEWAY_WORKER_PROCESSES: '1',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const nginx = spawn(process.env.NGINX_BIN || which('nginx'), apps.nginxArgs(gatewayDir), {
      stdio: ['ignore', fs.openSync('/dev/null', 'w'), 'inherit'],
    });
    children.push(nginx);
    await waitForHttpOk(`http://127.0.0.1:${gatewayPort}/healthz`, { timeoutMs: 15000 });
    const bare = fork(path.join(ROOT, 'scripts/bench/servers.cjs'), ['bare', String(barePort)], {
      stdio: 'inherit',
    });
    children.push(bare);
    await new Promise((resolve) => bare.once('message', resolve));
    // The same route in plain Nest, and in the platform's HTTP stack: what each layer under /v1/me costs.
    const layers = {};
    for (const [kind, port] of [
      ['nest', nestPort],
      ['platform', platformPort],
    ]) {
      layers[kind] = fork(path.join(ROOT, 'scripts/bench/servers.cjs'), [kind, String(port)], {
        stdio: 'inherit',
      });
      children.push(layers[kind]);
      await new Promise((resolve) => layers[kind].once('message', resolve));
    }

    const tokens = [];
    for (let i = 0; i < 8; i += 1)
      tokens.push(
        await mintToken(
          envFor(0),
          authPort,
          onboardPartner(envFor(0), `bench-${i}`, { scopes: 'profile:read seatime:read vessels:read' }),
        ),
      );
    const [meAuth, gatewayAuth, revalidateAuth, vesselsAuth, peerAuth, tracedAuth, sampledAuth, olderAuth] =
      tokens.map((t) => ({
        authorization: `Bearer ${t}`,
      }));
    const peer = await startPeer(peerPort, tokens[4], resources.env, 'bench-4');
    children.push(peer);
    const me = await fetch(`http://127.0.0.1:${crewPort}/v1/me`, { headers: revalidateAuth });
    if (me.status !== 200) throw new Error(`GET /v1/me answered ${me.status}: ${await me.text()}`);
    const etag = me.headers.get('etag');
    const vessels = await fetch(`http://127.0.0.1:${crewPort}/v1/me/vessels?limit=50`, {
      headers: vesselsAuth,
    });
    if (vessels.status !== 200) throw new Error(`GET /v1/me/vessels answered ${vessels.status}`);
    const vesselsEtag = vessels.headers.get('etag');
    const seaTime = await fetch(`http://127.0.0.1:${crewPort}/v1/me/sea-time`, { headers: vesselsAuth });
    if (seaTime.status !== 200) throw new Error(`GET /v1/me/sea-time answered ${seaTime.status}`);
    const seaTimeEtag = seaTime.headers.get('etag');

    const [redisInfo] = await redisCommands(servers.env.REDIS_URL, [['INFO', 'server']]);
    const redisPid = Number(/process_id:(\d+)/.exec(String(redisInfo))?.[1]);
    const scenarios = [
      {
        name: 'baseline (bare Fastify)',
        url: `http://127.0.0.1:${barePort}/v1/me`,
        headers: {},
        pids: () => [bare.pid],
      },
      {
        name: NEST_ROUTE,
        url: `http://127.0.0.1:${nestPort}/v1/me`,
        headers: {},
        pids: () => [layers.nest.pid],
      },
      {
        name: PLATFORM_ROUTE,
        url: `http://127.0.0.1:${platformPort}/v1/me`,
        headers: {},
        pids: () => [layers.platform.pid],
      },
      {
        name: 'GET /v1/me direct',
        url: `http://127.0.0.1:${crewPort}/v1/me`,
        headers: meAuth,
        pids: () => [crew.pid, redisPid],
      },
      ...(older
        ? [
            {
              name: BASELINE_BUILD,
              url: `http://127.0.0.1:${olderPort}/v1/me`,
              headers: olderAuth,
              pids: () => [older.pid, redisPid],
            },
          ]
        : []),
      {
        name: 'GET /v1/me via gateway',
        url: `http://127.0.0.1:${gatewayPort}/v1/me`,
        headers: gatewayAuth,
        pids: () => [crew.pid, redisPid, nginx.pid, ...childrenOf(nginx.pid)],
      },
      {
        name: 'GET /v1/me 304 revalidation',
        url: `http://127.0.0.1:${crewPort}/v1/me`,
        headers: { ...revalidateAuth, 'if-none-match': etag },
        pids: () => [crew.pid, redisPid],
        expect: 304,
      },
      {
        name: PEER,
        url: `http://127.0.0.1:${peerPort}/v1/me`,
        headers: peerAuth,
        pids: () => [peer.pid, redisPid],
      },
      {
        name: 'GET /v1/me traced 100 %',
        url: `http://127.0.0.1:${tracedPort}/v1/me`,
        headers: tracedAuth,
        pids: () => [traced.pid, redisPid],
      },
      {
        name: 'GET /v1/me traced 1 %',
        url: `http://127.0.0.1:${sampledPort}/v1/me`,
        headers: sampledAuth,
        pids: () => [sampled.pid, redisPid],
      },
      {
        name: VESSELS_PAGE,
        url: `http://127.0.0.1:${crewPort}/v1/me/vessels?limit=50`,
        headers: vesselsAuth,
        pids: () => [crew.pid, redisPid],
      },
      {
        name: VESSELS_304,
        url: `http://127.0.0.1:${crewPort}/v1/me/vessels?limit=50`,
        headers: { ...vesselsAuth, 'if-none-match': vesselsEtag },
        pids: () => [crew.pid, redisPid],
        expect: 304,
      },
      {
        name: SEA_TIME,
        url: `http://127.0.0.1:${crewPort}/v1/me/sea-time`,
        headers: vesselsAuth,
        pids: () => [crew.pid, redisPid],
      },
      {
        name: SEA_TIME_304,
        url: `http://127.0.0.1:${crewPort}/v1/me/sea-time`,
        headers: { ...vesselsAuth, 'if-none-match': seaTimeEtag },
        pids: () => [crew.pid, redisPid],
        expect: 304,
      },
      // The baseline build's answers to the same requests; its 304 takes this build's ETag, so a
      // change of the ETag's recipe would show here as 200s.
      ...(older
        ? [
            {
              name: `${VESSELS_PAGE}, baseline build`,
              url: `http://127.0.0.1:${olderPort}/v1/me/vessels?limit=50`,
              headers: vesselsAuth,
              pids: () => [older.pid, redisPid],
            },
            {
              name: `${VESSELS_304}, baseline build`,
              url: `http://127.0.0.1:${olderPort}/v1/me/vessels?limit=50`,
              headers: { ...vesselsAuth, 'if-none-match': vesselsEtag },
              pids: () => [older.pid, redisPid],
              expect: 304,
            },
            {
              name: `${SEA_TIME}, baseline build`,
              url: `http://127.0.0.1:${olderPort}/v1/me/sea-time`,
              headers: vesselsAuth,
              pids: () => [older.pid, redisPid],
            },
            {
              name: `${SEA_TIME_304}, baseline build`,
              url: `http://127.0.0.1:${olderPort}/v1/me/sea-time`,
              headers: { ...vesselsAuth, 'if-none-match': seaTimeEtag },
              pids: () => [older.pid, redisPid],
              expect: 304,
            },
          ]
        : []),
    ];
    if (process.env.BENCH_ONLY) {
      const keep = new RegExp(process.env.BENCH_ONLY);
      for (let i = scenarios.length - 1; i > 0; i -= 1)
        if (!keep.test(scenarios[i].name)) scenarios.splice(i, 1);
    }
    const best = new Map();
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const s of scenarios) {
        const before = cpuMicros(s.pids());
        const pgCpuSoFar = postgresCpuFrom(database);
        const redisBefore = cpuMicros([redisPid]);
        const r = await run(s.url, s.headers);
        const cpu = cpuMicros(s.pids()) - before;
        const redisCpu = s.pids().includes(redisPid) ? cpuMicros([redisPid]) - redisBefore : 0;
        const pgCpu = pgCpuSoFar();
        const wrong = r.non2xx - (s.expect === 304 ? (r['3xx'] ?? 0) : 0);
        if (r.errors > 0 || (s.expect !== 304 && r.non2xx > 0) || (s.expect === 304 && wrong > 0)) {
          throw new Error(`${s.name}: ${r.errors} errors, ${r.non2xx} non-2xx answers`);
        }
        const result = {
          name: s.name,
          rps: Math.round(r.requests.average),
          p50_ms: r.latency.p50,
          p99_ms: r.latency.p99,
          cpu_us_per_request: Math.round(cpu / Math.max(1, r.requests.total)),
          redis_cpu_us_per_request: Math.round(redisCpu / Math.max(1, r.requests.total)),
          postgres_cpu_us_per_request: Math.round(pgCpu / Math.max(1, r.requests.total)),
        };
        if (!best.has(s.name) || result.rps > best.get(s.name).rps) best.set(s.name, result);
      }
    }
    const results = [...best.values()];
    const base = results[0].rps;
    for (const r of results) r.ratio_to_baseline = Number((r.rps / base).toFixed(3));
    // The batch processor exports every few seconds: what the sink got shows the traced apps
    // really exported (and which spans), not only that they ran.
    await new Promise((r) => setTimeout(r, 6000));
    const otlp = await new Promise((resolve) => {
      sink.once('message', (m) => resolve(m.stats));
      sink.send('stats');
    });
    report(results, otlp);
    return results;
  } finally {
    for (const c of children) c.kill('SIGTERM');
    // Let crew-api drain and write its profile before the database goes away.
    await new Promise((r) => setTimeout(r, 1500));
    await resources?.cleanup();
  }
}

const PEER = 'GET /v1/me peer (NestJS docs way)';

/**
 * Starts the peer on the run's database and Redis, with `token` known to its bearer strategy as
 * alex.morgan's token of partner `clientId` (what a token cache would hold).
 */
async function startPeer(port, token, env, clientId) {
  const prefix = `${env.REDIS_KEY_PREFIX ?? ''}peer:`;
  const principal = { user_id: SANDBOX_MEMBERS[0].user_id, client_id: clientId, scopes: ['profile:read'] };
  const digest = crypto.createHash('sha256').update(token).digest('hex');
  await redisCommands(env.REDIS_URL, [
    ['SET', `${prefix}token:${digest}`, JSON.stringify(principal), 'EX', '3600'],
  ]);
  const peer = fork(path.join(ROOT, 'bench/peer/crew-me-peer.ts'), [String(port)], {
    execArgv: ['-r', path.join(ROOT, 'scripts/lib/ts-register.cjs')],
    env: {
      ...process.env,
      DATABASE_URL: env.DATABASE_URL,
      REDIS_URL: env.REDIS_URL,
      PEER_KEY_PREFIX: prefix,
    },
    stdio: 'inherit',
  });
  await new Promise((resolve, reject) => {
    peer.once('message', resolve);
    peer.once('exit', (code) => reject(new Error(`the peer exited (${code}) before it listened`)));
  });
  const me = await fetch(`http://127.0.0.1:${port}/v1/me`, { headers: { authorization: `Bearer ${token}` } });
  if (me.status !== 200) throw new Error(`the peer's GET /v1/me answered ${me.status}: ${await me.text()}`);
  return peer;
}

/** A token for alex.morgan with every scope, minted the way a partner gets one. */
async function mintToken(env, authPort, client) {
  require('reflect-metadata');
  const { AmqpConnection, RpcClient, createLogger } = require(path.join(ROOT, 'dist/libs/platform/src'));
  const amqp = new AmqpConnection(
    // As consent-ui, which asks auth.authorize.decide for a member.
    { url: appBrokerUrl('consent-ui', env.AMQP_URL), name: 'bench-crew', prefetch: 1 },
    createLogger('bench-crew', 'silent'),
  );
  amqp.start();
  const verifier = crypto.randomBytes(32).toString('base64url');
  const params = {
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: 'http://localhost:8765/callback',
    scope: 'profile:read seatime:read vessels:read',
    state: 'bench',
    code_challenge: crypto.createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  };
  const outcome = await new RpcClient(amqp, { RPC_TIMEOUT_MS: 10000 })
    .call(AUTH_AUTHORIZE_DECIDE, { user_id: SANDBOX_MEMBERS[0].user_id, params, decision: 'allow' })
    .finally(() => amqp.close());
  const res = await fetch(`http://127.0.0.1:${authPort}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: new URL(outcome.redirect_to).searchParams.get('code'),
      redirect_uri: params.redirect_uri,
      code_verifier: verifier,
      client_id: client.client_id,
      client_secret: client.client_secret,
    }),
  });
  return (await res.json()).access_token;
}

const TARGETS = {
  'GET /v1/me direct': { ratio: 0.3, p99: 25 },
  'GET /v1/me via gateway': { ratio: 0.25, p99: 30 },
};

function report(results, otlp) {
  const when = new Date().toISOString();
  // crew-api's throughput over the peer's, for the same answer (goal: at least 2).
  const ours = results.find((r) => r.name === 'GET /v1/me direct');
  const peer = results.find((r) => r.name === PEER);
  const oursToPeer = ours && peer ? Number((ours.rps / peer.rps).toFixed(2)) : undefined;
  const older = results.find((r) => r.name === BASELINE_BUILD);
  const oursToOlder = ours && older ? Number((ours.rps / older.rps).toFixed(2)) : undefined;
  const dir = path.join(ROOT, 'bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `crew-${when.replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(
    file,
    `${JSON.stringify({ when, connections: CONNECTIONS, seconds: SECONDS, rounds: ROUNDS, results, targets: TARGETS, me_direct_to_peer: oursToPeer, me_direct_to_baseline_build: oursToOlder, baseline_build: process.env.BENCH_BASELINE_LABEL, otlp_sink: otlp }, null, 2)}\n`,
  );
  console.log(
    `\ncrew-api, ${CONNECTIONS} connections, best of ${ROUNDS} interleaved rounds (results: ${path.relative(ROOT, file)})`,
  );
  console.log(
    'scenario                             req/s   ratio   p50 ms   p99 ms   CPU µs/req  (of it Redis)   PG µs/req',
  );
  console.log(
    `OTLP sink: ${otlp.requests} exports, ${otlp.spans} spans (${Object.entries(otlp.names)
      .map(([name, n]) => `${name} ${n}`)
      .join(', ')})`,
  );
  for (const r of results) {
    const target = TARGETS[r.name];
    const verdict = target
      ? r.ratio_to_baseline >= target.ratio && r.p99_ms <= target.p99
        ? `  target met (≥ ${target.ratio * 100} %, p99 ≤ ${target.p99} ms)`
        : `  target MISSED (≥ ${target.ratio * 100} %, p99 ≤ ${target.p99} ms)`
      : '';
    console.log(
      `${r.name.padEnd(34)} ${String(r.rps).padStart(7)}   ${r.ratio_to_baseline.toFixed(2)}   ${String(r.p50_ms).padStart(6)}   ${String(r.p99_ms).padStart(6)}   ${String(r.cpu_us_per_request).padStart(10)}  ${String(r.redis_cpu_us_per_request).padStart(13)}   ${String(r.postgres_cpu_us_per_request).padStart(9)}${verdict}`,
    );
  }
  if (oursToPeer !== undefined)
    console.log(`GET /v1/me direct to the peer: ${oursToPeer.toFixed(2)}× (goal ≥ 2×)`);
  for (const name of [VESSELS_PAGE, VESSELS_304, SEA_TIME, SEA_TIME_304]) {
    const now = results.find((r) => r.name === name);
    const then = results.find((r) => r.name === `${name}, baseline build`);
    if (now && then)
      console.log(
        `${name} to the baseline build: ${(now.rps / then.rps).toFixed(2)}× req/s, CPU per request ` +
          `${now.cpu_us_per_request} vs ${then.cpu_us_per_request} µs, PostgreSQL ${now.postgres_cpu_us_per_request} vs ${then.postgres_cpu_us_per_request} µs`,
      );
  }
  if (oursToOlder !== undefined)
    console.log(
      `GET /v1/me direct to the baseline build: ${oursToOlder.toFixed(2)}× req/s, CPU per request ` +
        `${ours.cpu_us_per_request} vs ${older.cpu_us_per_request} µs`,
    );
}

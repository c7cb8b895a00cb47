// `npm run bench -- oauth`: the authorization server's token endpoint under load, in an isolated
// database, vhost and Redis prefix, beside oidc-provider 9.13 (bench/peer/oidc-provider-peer.mjs) on the
// same machine, Redis and run, and a bare Fastify route (the ratio column). Scenarios, in rounds that
// alternate ours and the peer's so that both meet the same machine (every other round in the reverse
// order, so that each side goes first as often as the other):
//   refresh             POST /oauth/token grant_type=refresh_token, rotating chains (one per client), ours
//   oidc-provider ...   the same grant on the peer (POST /token), its rotation on every use
//   ..., fsync          the peer again on a Redis of its own that writes every change to disk before it
//                       answers (appendonly yes, appendfsync always): the durability each of ours has
//   ... 1 client        both again with a single client (latency without queueing)
//   exchange            POST /oauth/token grant_type=authorization_code (a fresh code per request)
//   cached              GET /oauth/userinfo with a seatime:read token: bearer authentication on a cache
//                       hit, which must cost one Redis command and no database transaction
// Both servers are asked with client_secret_basic. For each: req/s, p50, p99, and CPU µs per request of
// the app process, of PostgreSQL (the run database's backends) and of Redis, read from /proc.
// BENCH_MEMBERS=1 gives every refresh chain one member (by default each chain is another member's).
// BENCH_SECONDS (5), BENCH_CONCURRENCY (16), BENCH_ROUNDS (5), BENCH_CODES (codes per exchange round,
// 1500), BENCH_POOL_SIZE (auth-server's DATABASE_POOL_SIZE; its default, 10, when unset); BENCH_PROFILE=1 writes auth-server's CPU profile to bench/profiles/auth-server.cpuprofile
// (summarise it with scripts/bench/profile-summary.mjs).
// BENCH_BASELINE_DIST=<another build's dist/> (e.g. an earlier commit's) adds that build's auth-server, in a
// database, vhost and Redis prefix of its own, and its refresh scenarios ("baseline build: ...") to every round,
// interleaved with ours: an A/B of two builds on the same machine and run. BENCH_BASELINE_LABEL names it.
// Results go to bench/results/oauth-<time>.json (every round, and the best of each scenario).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import http from 'node:http';
import path from 'node:path';
import { fork, spawn } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { ROOT } = require('../lib/deps.cjs');
const apps = require('../lib/apps.cjs');
const { freePort, waitForHttpOk, redisCommands } = require('../lib/net.cjs');
const { provision } = require('../lib/services.cjs');
const { createRunResources, deleteKeys } = require('../lib/isolation.cjs');
const { appBrokerUrl } = require('../lib/credentials.cjs');
const { AUTH_AUTHORIZE_DECIDE, SANDBOX_MEMBERS } = require(path.join(ROOT, 'dist/libs/contracts/src'));

const SECONDS = Number(process.env.BENCH_SECONDS ?? '5');
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? '16');
const CODES = Number(process.env.BENCH_CODES ?? '1500');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? '5');
// Each refresh chain is another member's, as a partner's backend refreshes many members' tokens; with
// BENCH_MEMBERS=1 every chain is one member's (every refresh then shares that member's consent row lock).
const ONE_MEMBER = process.env.BENCH_MEMBERS === '1';
const PROFILE = process.env.BENCH_PROFILE === '1';
const { cpuByPid, cpuSince, postgresCpuFrom, machineTicks, busySince } = require('./procstat.cjs');
const { median } = require('./stats.cjs');
const CLIENT = { client_id: 'sandbox-partner', client_secret: 'sandbox-secret' };
const REDIRECT_URI = 'http://localhost:8765/callback';
const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });

function request(url, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = http.request(url, { method, headers, agent }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode,
          body: Buffer.concat(chunks).toString(),
          ms: Number(process.hrtime.bigint() - started) / 1e6,
        }),
      );
    });
    req.on('error', reject);
    if (body) req.end(body);
    else req.end();
  });
}

const form = (fields) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
});

/** Runs `next()` from `clients` loops until `stop()`; every answer must be 200. */
async function measure(name, next, stop, clients = CONCURRENCY) {
  const latencies = [];
  const begun = [];
  const started = Date.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, worker) => {
      while (!stop(latencies.length)) {
        const res = await next(worker);
        if (res.status !== 200) throw new Error(`${name}: HTTP ${res.status} ${res.body.slice(0, 200)}`);
        latencies.push(res.ms);
        begun.push(Date.now() - res.ms);
      }
    }),
  );
  const seconds = (Date.now() - started) / 1000;
  const byLatency = latencies.map((ms, i) => [ms, begun[i]]);
  latencies.sort((a, b) => a - b);
  const pct = (p) =>
    Number((latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0).toFixed(2));
  // The slowest 1 %, by the 100 ms window each began in: a few windows holding many of them are
  // stalls that every client met at once (a collector pause, a slow statement), not a spread-out tail.
  const tail = byLatency.filter(([ms]) => ms >= pct(0.99));
  const windows = new Set(tail.map(([, at]) => Math.floor((at - started) / 100)));
  return {
    name,
    clients,
    requests: latencies.length,
    rps: Math.round(latencies.length / seconds),
    p50_ms: pct(0.5),
    p99_ms: pct(0.99),
    slowest_1pct: { requests: tail.length, began_in_100ms_windows: windows.size },
  };
}

const forSeconds = (s) => {
  const until = Date.now() + s * 1000;
  return () => Date.now() >= until;
};

/** HTTP Basic as RFC 6749 §2.3.1 has it: the id and the secret form-urlencoded first. */
const basic = ({ client_id, client_secret }) =>
  `Basic ${Buffer.from(`${encodeURIComponent(client_id)}:${encodeURIComponent(client_secret)}`).toString('base64')}`;

const PEER = 'oidc-provider 9.13';
const PEER_FSYNC = 'oidc-provider 9.13, fsync';
const BASELINE = 'baseline build';
const BASELINE_DIST = process.env.BENCH_BASELINE_DIST
  ? path.resolve(process.env.BENCH_BASELINE_DIST)
  : undefined;

/**
 * One auth-server of the build at `dist` (ours: the repository's), in a database, vhost and Redis
 * prefix of its own, migrated and seeded by that build, with its bench members, its refresh chains
 * (one per client and one for the single client) and a way to exchange codes minted for it.
 */
async function startAuthServer({ dist, servers, children, cleanups }) {
  const resources = await createRunResources(servers.env, { log: (l) => console.error(l) });
  cleanups.push(() => resources.cleanup());
  const port = await freePort();
  const metricsPort = await freePort();
  const env = apps.appEnv({
    app: 'auth-server',
    services: { ...servers.env, ...resources.env },
    fixed: {
      PORT: port,
      METRICS_PORT: metricsPort,
      LOG_LEVEL: 'warn',
      APP_ENV: 'sandbox',
      // auth-server's own default (10) unless BENCH_POOL_SIZE says otherwise.
      ...(process.env.BENCH_POOL_SIZE ? { DATABASE_POOL_SIZE: process.env.BENCH_POOL_SIZE } : {}),
    },
  });
  const script = (file) => (dist ? path.join(dist, 'apps', 'auth-server', 'src', file) : undefined);
  for (const command of ['migrate', 'seed']) {
    if (!dist) await apps.runCli('auth-server', command, env);
    else {
      await new Promise((resolve, reject) => {
        const cli = spawn(process.execPath, [script('cli.js'), command], {
          env,
          stdio: 'inherit',
          cwd: ROOT,
        });
        cli.on('exit', (code) =>
          code === 0 ? resolve() : reject(new Error(`baseline cli ${command}: ${code}`)),
        );
      });
    }
  }
  // Node's own file name (CPU.<date>.<time>.<pid>.<thread>.<n>.cpuprofile), renamed by nameProfiles.
  const profile = PROFILE && !dist ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_RUN_DIR}`] : [];
  const auth = spawn(process.execPath, [...profile, script('main.js') ?? apps.mainJs('auth-server')], {
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(auth);
  const base = `http://127.0.0.1:${port}`;
  await waitForHttpOk(`${base}/readyz`, { timeoutMs: 60000 });

  // Codes are minted the way consent-ui does it: auth.authorize.decide over RabbitMQ.
  require('reflect-metadata');
  const { AmqpConnection, RpcClient, createLogger } = require(path.join(ROOT, 'dist/libs/platform/src'));
  const amqp = new AmqpConnection(
    // As consent-ui, which asks auth.authorize.decide for a member.
    { url: appBrokerUrl('consent-ui', env.AMQP_URL), name: 'bench-oauth', prefetch: 1 },
    createLogger('bench-oauth', 'silent'),
  );
  amqp.start();
  cleanups.push(() => amqp.close());
  const rpc = new RpcClient(amqp, { RPC_TIMEOUT_MS: 10000 });
  const user = SANDBOX_MEMBERS[0].user_id;
  const chainUsers = [];
  if (ONE_MEMBER) {
    for (let i = 0; i <= CONCURRENCY; i += 1) chainUsers.push(user);
  } else {
    // The run's own database: bench members with no usable password, enough to consent and refresh.
    const { Client } = require('pg');
    const db = new Client({ connectionString: resources.env.DATABASE_URL });
    await db.connect();
    try {
      for (let i = 0; i <= CONCURRENCY; i += 1) {
        const id = `usr_bench_${i}`;
        await db.query(
          `INSERT INTO auth.users (user_id, email, password_hash, name) VALUES ($1, $2, '!', $3)`,
          [id, `${id}@bench.test`, `Bench member ${i}`],
        );
        chainUsers.push(id);
      }
    } finally {
      await db.end();
    }
  }
  const mint = async (scope, userId = user) => {
    const verifier = crypto.randomBytes(32).toString('base64url');
    const params = {
      response_type: 'code',
      client_id: CLIENT.client_id,
      redirect_uri: REDIRECT_URI,
      scope,
      state: 'bench',
      code_challenge: crypto.createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    };
    const outcome = await rpc.call(AUTH_AUTHORIZE_DECIDE, { user_id: userId, params, decision: 'allow' });
    return { code: new URL(outcome.redirect_to).searchParams.get('code'), verifier };
  };
  // Codes live 60 s, so each exchange round mints its own just before it.
  const mintCodes = async (n) => {
    const codes = [];
    while (codes.length < n)
      codes.push(...(await Promise.all(Array.from({ length: 50 }, () => mint('profile:read seatime:read')))));
    return codes;
  };
  const exchange = (pair) =>
    request(`${base}/oauth/token`, {
      ...form({
        grant_type: 'authorization_code',
        code: pair.code,
        redirect_uri: REDIRECT_URI,
        code_verifier: pair.verifier,
      }),
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(CLIENT) },
    });
  // Warm-up, and the refresh chains' first tokens.
  const chains = [];
  for (let i = 0; i <= CONCURRENCY; i += 1) {
    const res = await exchange(await mint('profile:read seatime:read', chainUsers[i]));
    if (res.status !== 200) throw new Error(`code exchange answered ${res.status}: ${res.body}`);
    chains.push(JSON.parse(res.body).refresh_token);
  }
  const narrow = JSON.parse((await exchange(await mint('profile:read seatime:read'))).body);
  const refresh = (chain) => async (worker) => {
    const res = await request(`${base}/oauth/token`, {
      ...form({ grant_type: 'refresh_token', refresh_token: chain[worker] }),
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(CLIENT) },
    });
    if (res.status === 200) chain[worker] = JSON.parse(res.body).refresh_token;
    return res;
  };
  const single = [chains.pop()];
  return {
    env,
    resources,
    pid: auth.pid,
    base,
    metricsPort,
    database: new URL(resources.env.DATABASE_URL).pathname.slice(1),
    user,
    chains,
    single,
    narrow,
    mintCodes,
    exchange,
    refresh,
  };
}

export async function benchOAuth() {
  const children = [];
  const cleanups = [];
  let peerStore;
  try {
    const servers = await provision({ log: (l) => console.error(l) });
    const ours = await startAuthServer({ servers, children, cleanups });
    const older = BASELINE_DIST
      ? await startAuthServer({ dist: BASELINE_DIST, servers, children, cleanups })
      : undefined;
    const { env, base, metricsPort, user, chains, narrow, mintCodes, exchange } = ours;
    const auth = { pid: ours.pid };
    const auth_ = { authorization: basic(CLIENT) };

    const barePort = await freePort();
    const bare = fork(path.join(ROOT, 'scripts/bench/servers.cjs'), ['bare', String(barePort)], {
      stdio: 'inherit',
    });
    children.push(bare);
    await new Promise((resolve) => bare.once('message', resolve));

    // The peer: the same client (id and secret), on the same Redis server (one process, so its CPU is
    // counted alike) but in a Redis database of its own, the next one after ours, so nothing of
    // auth-server's is touched; its keys carry the run's prefix too, and go with the run.
    const peerRedis = new URL(env.REDIS_URL);
    peerRedis.pathname = `/${Number(peerRedis.pathname.slice(1) || '0') + 1}`;
    peerStore = { url: peerRedis.toString(), prefix: `${env.REDIS_KEY_PREFIX ?? ''}oidc-peer:` };
    const peer = await startPeer(peerStore.url, peerStore.prefix);
    const peerChains = peer.chains;
    // The honest peer: the same oidc-provider on a Redis of its own that writes every change to disk
    // before it answers (appendonly, appendfsync always), as durable as each of our refreshes is in
    // PostgreSQL. A private redis-server in a directory of the run's, gone with it.
    const fsyncDir = fs.mkdtempSync(path.join(os.tmpdir(), 'oidc-peer-fsync-'));
    cleanups.push(async () => fs.rmSync(fsyncDir, { recursive: true, force: true }));
    const fsyncPort = await freePort();
    const fsyncRedis = spawn(
      'redis-server',
      ['--port', String(fsyncPort), '--bind', '127.0.0.1', '--save', '', '--dir', fsyncDir].concat([
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
      ]),
      { stdio: 'ignore' },
    );
    children.push(fsyncRedis);
    const fsyncUrl = `redis://127.0.0.1:${fsyncPort}/0`;
    for (let i = 0; ; i += 1) {
      const ok = await redisCommands(fsyncUrl, [['PING']]).then(
        () => true,
        () => false,
      );
      if (ok) break;
      if (i > 50) throw new Error("the fsync peer's redis-server did not answer");
      await new Promise((r) => setTimeout(r, 100));
    }
    const durable = await startPeer(fsyncUrl, 'oidc-peer:');

    /** One oidc-provider on `redisUrl`, with a refresh chain for every client and one more. */
    async function startPeer(redisUrl, prefix) {
      const port = await freePort();
      const child = fork(path.join(ROOT, 'bench/peer/oidc-provider-peer.mjs'), [String(port)], {
        env: {
          ...process.env,
          REDIS_URL: redisUrl,
          PEER_KEY_PREFIX: prefix,
          PEER_CLIENTS: JSON.stringify([CLIENT]),
        },
        stdio: 'inherit',
      });
      children.push(child);
      await new Promise((resolve, reject) => {
        child.once('message', resolve);
        child.once('exit', (code) => reject(new Error(`the peer exited (${code}) before it listened`)));
      });
      const chains = await new Promise((resolve, reject) => {
        child.once('message', (m) => (m.minted ? resolve(m.minted) : reject(new Error(m.error))));
        child.send({
          mint: {
            client_id: CLIENT.client_id,
            account_id: user,
            scope: 'offline_access profile:read seatime:read',
            count: CONCURRENCY + 1,
          },
        });
      });
      const single = [chains.pop()];
      return { pid: child.pid, port, chains, single };
    }

    const refreshOurs = ours.refresh;
    const refreshPeer =
      (chain, port = peer.port) =>
      async (worker) => {
        const res = await request(`http://127.0.0.1:${port}/token`, {
          ...form({ grant_type: 'refresh_token', refresh_token: chain[worker] }),
          headers: { 'content-type': 'application/x-www-form-urlencoded', ...auth_ },
        });
        if (res.status === 200) chain[worker] = JSON.parse(res.body).refresh_token;
        return res;
      };
    // Each concurrency has chains of its own; the single client's is the last one.
    const oursSingle = ours.single;
    const peerSingle = peer.single;
    // Every answer must be a 200 whose refresh token works next: warm each before measuring.
    for (let i = 0; i < 50; i += 1) {
      const answers = [
        await refreshOurs(oursSingle)(0),
        await refreshPeer(peerSingle)(0),
        await refreshPeer(durable.single, durable.port)(0),
      ];
      if (older) answers.push(await older.refresh(older.single)(0));
      for (const r of answers)
        if (r.status !== 200) throw new Error(`warm-up refresh answered ${r.status}: ${r.body}`);
    }

    const [redisInfo] = await redisCommands(env.REDIS_URL, [['INFO', 'server']]);
    const redisPid = Number(/process_id:(\d+)/.exec(String(redisInfo))?.[1]);
    /** auth-server's garbage collections, from its metrics (prom-client's default histogram). */
    const authGc = async () => {
      const lines = (await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()).split('\n');
      const sum = (prefix, match) =>
        lines
          .filter((l) => l.startsWith(prefix) && match(l))
          .reduce((a, l) => a + Number(l.split(' ').at(-1)), 0);
      const gc = (kind) => {
        const ofKind = (l) => l.includes(`kind="${kind}"`);
        const count = sum('nodejs_gc_duration_seconds_count{', ofKind);
        return {
          count,
          seconds: sum('nodejs_gc_duration_seconds_sum{', ofKind),
          over10ms:
            count - sum('nodejs_gc_duration_seconds_bucket{', (l) => ofKind(l) && l.includes('le="0.01"')),
        };
      };
      return { minor: gc('minor'), major: gc('major'), incremental: gc('incremental') };
    };
    /** Measures one scenario with the CPU of `appPid`, PostgreSQL's backends and Redis. */
    const withCpu = async (appPid, run, database = ours.database, redis = redisPid) => {
      const pg = postgresCpuFrom(database);
      const app = cpuByPid([appPid]);
      const rd = cpuByPid([redis]);
      const machine = machineTicks();
      const isOurs = appPid === auth.pid;
      const before = isOurs ? { gc: await authGc(), counts: await counters(env) } : undefined;
      const r = await run();
      const after = isOurs ? { gc: await authGc(), counts: await counters(env) } : undefined;
      // auth-server's collector pauses in the round: what its slowest requests may have waited on.
      const gc =
        after &&
        Object.fromEntries(
          Object.entries(after.gc).map(([kind, a]) => [
            kind,
            {
              count: a.count - before.gc[kind].count,
              ms: Math.round((a.seconds - before.gc[kind].seconds) * 1000),
              over_10_ms: a.over10ms - before.gc[kind].over10ms,
            },
          ]),
        );
      const per = (us) => Math.round(us / Math.max(1, r.requests));
      const appUs = per(cpuSince(app));
      const pgUs = per(pg());
      const redisUs = per(cpuSince(rd));
      return {
        ...r,
        cpu_us_per_request: { app: appUs, postgres: pgUs, redis: redisUs, total: appUs + pgUs + redisUs },
        machine_busy: busySince(machine),
        // Round trips per request: PostgreSQL transactions (a group commit shares one) and Redis commands.
        ...(after && {
          db_transactions_per_request: perRequest(after.counts.db - before.counts.db, r.requests),
          redis_commands_per_request: perRequest(after.counts.redis - before.counts.redis, r.requests),
        }),
        ...(gc && { auth_server_gc: gc }),
      };
    };

    const scenarios = [
      {
        name: 'token: refresh (rotating)',
        run: () =>
          withCpu(auth.pid, () =>
            measure('token: refresh (rotating)', refreshOurs(chains), forSeconds(SECONDS)),
          ),
      },
      {
        name: `${PEER}: refresh (rotating)`,
        run: () =>
          withCpu(peer.pid, () =>
            measure(`${PEER}: refresh (rotating)`, refreshPeer(peerChains), forSeconds(SECONDS)),
          ),
      },
      {
        name: 'token: refresh (rotating), 1 client',
        run: () =>
          withCpu(auth.pid, () =>
            measure('token: refresh (rotating), 1 client', refreshOurs(oursSingle), forSeconds(SECONDS), 1),
          ),
      },
      {
        name: `${PEER}: refresh (rotating), 1 client`,
        run: () =>
          withCpu(peer.pid, () =>
            measure(`${PEER}: refresh (rotating), 1 client`, refreshPeer(peerSingle), forSeconds(SECONDS), 1),
          ),
      },
      {
        name: `${PEER_FSYNC}: refresh (rotating)`,
        run: () =>
          withCpu(
            durable.pid,
            () =>
              measure(
                `${PEER_FSYNC}: refresh (rotating)`,
                refreshPeer(durable.chains, durable.port),
                forSeconds(SECONDS),
              ),
            ours.database,
            fsyncRedis.pid,
          ),
      },
      {
        name: `${PEER_FSYNC}: refresh (rotating), 1 client`,
        run: () =>
          withCpu(
            durable.pid,
            () =>
              measure(
                `${PEER_FSYNC}: refresh (rotating), 1 client`,
                refreshPeer(durable.single, durable.port),
                forSeconds(SECONDS),
                1,
              ),
            ours.database,
            fsyncRedis.pid,
          ),
      },
      {
        name: 'token: code exchange',
        run: async () => {
          const codes = await mintCodes(CODES);
          let next = 0;
          return withCpu(auth.pid, () =>
            measure(
              'token: code exchange',
              () => exchange(codes[next++]),
              (n) => next >= codes.length || n >= codes.length,
            ),
          );
        },
      },
    ];
    if (older) {
      // The baseline build's refreshes, interleaved with ours in every round (an A/B on one machine).
      const olderRefresh = (name, chain, clients) => ({
        name,
        run: () =>
          withCpu(
            older.pid,
            () => measure(name, older.refresh(chain), forSeconds(SECONDS), clients),
            older.database,
          ),
      });
      scenarios.splice(1, 0, olderRefresh(`${BASELINE}: refresh (rotating)`, older.chains, CONCURRENCY));
      scenarios.splice(4, 0, olderRefresh(`${BASELINE}: refresh (rotating), 1 client`, older.single, 1));
    }
    if (process.env.BENCH_ONLY) {
      const keep = new RegExp(process.env.BENCH_ONLY);
      for (let i = scenarios.length - 1; i >= 0; i -= 1)
        if (!keep.test(scenarios[i].name)) scenarios.splice(i, 1);
    }

    const results = [];
    const baseline = await measure(
      'baseline (bare Fastify)',
      () => request(`http://127.0.0.1:${barePort}/v1/me`),
      forSeconds(SECONDS),
    );
    results.push(baseline);
    const rounds = [];
    const best = new Map();
    for (let round = 0; round < ROUNDS; round += 1) {
      // A machine that speeds up or slows down through the run would favour whichever side always went first.
      for (const s of round % 2 === 0 ? scenarios : [...scenarios].reverse()) {
        const r = await s.run();
        r.round = round + 1;
        rounds.push(r);
        console.error(
          `bench: round ${round + 1} ${r.name}: ${r.rps} req/s, p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms, CPU µs/req ${JSON.stringify(r.cpu_us_per_request)}, machine ${Math.round(r.machine_busy * 100)} % busy${r.db_transactions_per_request !== undefined ? `, ${r.db_transactions_per_request} PostgreSQL transactions and ${r.redis_commands_per_request} Redis commands per request` : ''}, slowest 1 % began in ${r.slowest_1pct.began_in_100ms_windows} windows of 100 ms${r.auth_server_gc ? `, auth-server GC ${JSON.stringify(r.auth_server_gc)}` : ''}`,
        );
        if (!best.has(s.name) || r.rps > best.get(s.name).rps) best.set(s.name, r);
      }
    }
    results.push(...best.values());

    const USERINFO = 'userinfo: cached-token authentication';
    // BENCH_ONLY leaves it out too, so that a profile of the scenarios it keeps is theirs alone.
    if (!process.env.BENCH_ONLY || new RegExp(process.env.BENCH_ONLY).test(USERINFO))
      results.push(await measureUserinfo());
    for (const r of results) r.ratio_to_baseline = Number((r.rps / baseline.rps).toFixed(3));
    report(results, rounds);
    return results;

    async function measureUserinfo() {
      // A seatime:read-only token: userinfo answers {sub} from the principal alone, so the
      // request costs exactly what bearer authentication costs.
      const refreshed = await request(`${base}/oauth/token`, {
        ...form({ grant_type: 'refresh_token', refresh_token: narrow.refresh_token, scope: 'seatime:read' }),
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...auth_ },
      });
      const token = JSON.parse(refreshed.body).access_token;
      const userinfo = () =>
        request(`${base}/oauth/userinfo`, { headers: { authorization: `Bearer ${token}` } });
      await userinfo(); // fills the cache
      const before = await counters(env);
      const cached = await measure(USERINFO, userinfo, forSeconds(SECONDS));
      const after = await counters(env);
      cached.redis_commands_per_request = perRequest(after.redis - before.redis, cached.requests);
      cached.db_transactions_per_request = perRequest(after.db - before.db, cached.requests);
      return cached;
    }
  } finally {
    for (const c of children) c.kill('SIGTERM');
    agent.destroy();
    // Let auth-server write its profile before the database goes away.
    await new Promise((r) => setTimeout(r, PROFILE ? 2000 : 200));
    if (PROFILE) nameProfiles();
    if (peerStore) await deleteKeys(peerStore.url, peerStore.prefix).catch(() => undefined);
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  }
}

const PROFILE_DIR = path.join(ROOT, 'bench', 'profiles');
const PROFILE_RUN_DIR = path.join(PROFILE_DIR, 'auth-server-run');

/** auth-server's profile (Node names it after the process and thread) as auth-server.cpuprofile. */
function nameProfiles() {
  if (!fs.existsSync(PROFILE_RUN_DIR)) return;
  for (const file of fs.readdirSync(PROFILE_RUN_DIR))
    fs.renameSync(path.join(PROFILE_RUN_DIR, file), path.join(PROFILE_DIR, 'auth-server.cpuprofile'));
  fs.rmSync(PROFILE_RUN_DIR, { recursive: true, force: true });
}

/** Redis commands processed and database transactions committed, for the cache-hit check. */
async function counters(env) {
  const { Client } = require('pg');
  const client = new Client({ connectionString: env.DATABASE_URL });
  await client.connect();
  // Backends flush their statistics at most once a second; let them settle before reading.
  await new Promise((r) => setTimeout(r, 1500));
  const { rows } = await client.query(
    'SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()',
  );
  await client.end();
  // The rate limits' Redis and the token cache's (tombstones), when that is another server.
  let redis = 0;
  for (const url of new Set([env.REDIS_URL, env.REDIS_CACHE_URL ?? env.REDIS_URL])) {
    const [info] = await redisCommands(url, [['INFO', 'stats']]);
    redis += Number(/total_commands_processed:(\d+)/.exec(String(info))?.[1] ?? NaN);
  }
  return { db: Number(rows[0].n), redis };
}

/** A count per request, to three decimals (one command or transaction per thousand). */
function perRequest(count, requests) {
  return Number((count / Math.max(1, requests)).toFixed(3));
}

/** The median of the scenario's req/s over every round. */
function medianRps(rounds, name) {
  return median(rounds.filter((r) => r.name === name).map((r) => r.rps));
}

/** The median of the scenario's p99 over every round. */
function medianP99(rounds, name) {
  return median(rounds.filter((r) => r.name === name).map((r) => r.p99_ms));
}

/**
 * The geometric mean of ours over the peer's req/s in each round: each ratio is of two neighbouring
 * measurements, so the machine's drift between rounds cancels out of it.
 */
function pairedRpsRatio(rounds, ours, peer) {
  const logs = [];
  for (const r of rounds.filter((x) => x.name === ours)) {
    const p = rounds.find((x) => x.name === peer && x.round === r.round);
    if (p) logs.push(Math.log(r.rps / p.rps));
  }
  return logs.length ? Math.exp(logs.reduce((a, b) => a + b, 0) / logs.length) : undefined;
}

/**
 * Ours over the peer's, per pair of scenarios (the issue's goals): best rounds, medians of every
 * round, and round by round.
 */
function versus(results, rounds, other = PEER) {
  const find = (name) => results.find((r) => r.name === name);
  const pairs = {};
  for (const suffix of ['refresh (rotating)', 'refresh (rotating), 1 client']) {
    const ours = find(`token: ${suffix}`);
    const peer = find(`${other}: ${suffix}`);
    if (!ours || !peer) continue;
    pairs[suffix] = {
      rps_ratio: Number((ours.rps / peer.rps).toFixed(2)),
      median_rps_ratio: Number((medianRps(rounds, ours.name) / medianRps(rounds, peer.name)).toFixed(2)),
      paired_rps_ratio: Number(pairedRpsRatio(rounds, ours.name, peer.name)?.toFixed(2)),
      p50_ms: [ours.p50_ms, peer.p50_ms],
      p99_ms: [ours.p99_ms, peer.p99_ms],
      median_p99_ms: [medianP99(rounds, ours.name), medianP99(rounds, peer.name)],
      cpu_us_per_request_total: [ours.cpu_us_per_request.total, peer.cpu_us_per_request.total],
    };
  }
  const exchange = find('token: code exchange');
  const refresh = find('token: refresh (rotating)');
  if (exchange && refresh) pairs.exchange_to_refresh = Number((exchange.rps / refresh.rps).toFixed(2));
  return pairs;
}

function report(results, rounds) {
  const when = new Date().toISOString();
  const dir = path.join(ROOT, 'bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `oauth-${when.replace(/[:.]/g, '-')}.json`);
  const vs = versus(results, rounds);
  const vsFsync = versus(results, rounds, PEER_FSYNC);
  // Ours over the baseline build's (BENCH_BASELINE_DIST), measured the same way as against the peer.
  const vsBaseline = BASELINE_DIST ? versus(results, rounds, BASELINE) : undefined;
  fs.writeFileSync(
    file,
    `${JSON.stringify({ when, concurrency: CONCURRENCY, seconds: SECONDS, rounds: ROUNDS, cpus: os.cpus().length, members: ONE_MEMBER ? 'one for every chain' : 'one per chain', auth_server: { DATABASE_POOL_SIZE: process.env.BENCH_POOL_SIZE ?? 'default', TOKEN_REFRESH_CONCURRENCY: process.env.TOKEN_REFRESH_CONCURRENCY ?? 'default', TOKEN_EXCHANGE_CONCURRENCY: process.env.TOKEN_EXCHANGE_CONCURRENCY ?? 'default' }, baseline_build: BASELINE_DIST ? (process.env.BENCH_BASELINE_LABEL ?? 'BENCH_BASELINE_DIST') : undefined, results, versus_peer: vs, versus_peer_fsync: vsFsync, versus_baseline_build: vsBaseline, every_round: rounds }, null, 2)}\n`,
  );
  console.log(
    `\nauth-server and ${PEER}, ${CONCURRENCY} keep-alive clients, best of ${ROUNDS} alternating rounds (results: ${path.relative(ROOT, file)})`,
  );
  console.log(
    'measure                                        req/s   ratio   p50 ms   p99 ms   CPU µs/req app+PG+Redis',
  );
  for (const r of results) {
    const cpu = r.cpu_us_per_request;
    console.log(
      `${r.name.padEnd(45)} ${String(r.rps).padStart(6)}   ${r.ratio_to_baseline.toFixed(3)}   ${String(r.p50_ms).padStart(6)}   ${String(r.p99_ms).padStart(6)}   ${cpu ? `${cpu.app}+${cpu.postgres}+${cpu.redis} = ${cpu.total}` : ''}`,
    );
  }
  console.log(`ours to the peer: ${JSON.stringify(vs)}`);
  console.log(`ours to the peer on a Redis that fsyncs every write: ${JSON.stringify(vsFsync)}`);
  if (vsBaseline) console.log(`ours to the baseline build: ${JSON.stringify(vsBaseline)}`);
  const cached = results.find((r) => r.redis_commands_per_request !== undefined);
  if (cached)
    console.log(
      `cache hit: ${cached.redis_commands_per_request} Redis commands and ${cached.db_transactions_per_request} database transactions per request`,
    );
}

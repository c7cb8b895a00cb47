// `npm run bench -- oauth`: the authorization server under load, in an isolated database, vhost
// and Redis prefix, against a bare Fastify route measured in the same run (the ratio column).
//   exchange   POST /oauth/token grant_type=authorization_code (a fresh code per request)
//   refresh    POST /oauth/token grant_type=refresh_token (rotating chains, one per client)
//   cached     GET /oauth/userinfo with a seatime:read token: bearer authentication on a cache
//              hit, which must cost one Redis command and no database transaction
// Results go to bench/results/oauth-<time>.json (and the table to stdout).
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fork, spawn } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { ROOT } = require('../lib/deps.cjs');
const apps = require('../lib/apps.cjs');
const { freePort, waitForHttpOk, redisCommands } = require('../lib/net.cjs');
const { provision } = require('../lib/services.cjs');
const { createRunResources } = require('../lib/isolation.cjs');
const { AUTH_AUTHORIZE_DECIDE, SANDBOX_MEMBERS } = require(path.join(ROOT, 'dist/libs/contracts/src'));

const SECONDS = Number(process.env.BENCH_SECONDS ?? '5');
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? '16');
const CODES = Number(process.env.BENCH_CODES ?? '1500');
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

/** Runs `next()` from `CONCURRENCY` loops until `stop()`; every answer must be 200. */
async function measure(name, next, stop) {
  const latencies = [];
  const started = Date.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      while (!stop(latencies.length)) {
        const res = await next(worker);
        if (res.status !== 200) throw new Error(`${name}: HTTP ${res.status} ${res.body.slice(0, 200)}`);
        latencies.push(res.ms);
      }
    }),
  );
  const seconds = (Date.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p) =>
    Number((latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0).toFixed(2));
  return {
    name,
    requests: latencies.length,
    rps: Math.round(latencies.length / seconds),
    p50_ms: pct(0.5),
    p99_ms: pct(0.99),
  };
}

const forSeconds = (s) => {
  const until = Date.now() + s * 1000;
  return () => Date.now() >= until;
};

export async function benchOAuth() {
  const children = [];
  let resources;
  try {
    const servers = await provision({ log: (l) => console.error(l) });
    resources = await createRunResources(servers.env, { log: (l) => console.error(l) });
    const port = await freePort();
    const env = apps.appEnv({
      services: { ...servers.env, ...resources.env },
      fixed: { PORT: port, LOG_LEVEL: 'warn', APP_ENV: 'sandbox' },
    });
    await apps.runCli('auth-server', 'migrate', env);
    await apps.runCli('auth-server', 'seed', env);
    const auth = spawn(process.execPath, [apps.mainJs('auth-server')], {
      env,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(auth);
    const base = `http://127.0.0.1:${port}`;
    await waitForHttpOk(`${base}/readyz`, { timeoutMs: 60000 });

    const barePort = await freePort();
    const bare = fork(path.join(ROOT, 'scripts/bench/servers.cjs'), ['bare', String(barePort)], {
      stdio: 'inherit',
    });
    children.push(bare);
    await new Promise((resolve) => bare.once('message', resolve));

    // Codes are minted the way consent-ui does it: auth.authorize.decide over RabbitMQ.
    require('reflect-metadata');
    const { AmqpConnection, RpcClient, createLogger } = require(path.join(ROOT, 'dist/libs/platform/src'));
    const amqp = new AmqpConnection(
      { url: env.AMQP_URL, name: 'bench-oauth', prefetch: 1 },
      createLogger('bench-oauth', 'silent'),
    );
    amqp.start();
    const rpc = new RpcClient(amqp, { RPC_TIMEOUT_MS: 10000 });
    const user = SANDBOX_MEMBERS[0].user_id;
    const mint = async (scope) => {
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
      const outcome = await rpc.call(AUTH_AUTHORIZE_DECIDE, { user_id: user, params, decision: 'allow' });
      return { code: new URL(outcome.redirect_to).searchParams.get('code'), verifier };
    };
    console.error(`bench: minting ${CODES} authorization codes`);
    const codes = [];
    while (codes.length < CODES)
      codes.push(...(await Promise.all(Array.from({ length: 50 }, () => mint('profile:read seatime:read')))));
    await amqp.close();

    const exchange = (pair) =>
      request(`${base}/oauth/token`, {
        ...form({
          ...CLIENT,
          grant_type: 'authorization_code',
          code: pair.code,
          redirect_uri: REDIRECT_URI,
          code_verifier: pair.verifier,
        }),
      });
    // Warm-up, and the refresh chains' first tokens.
    const chains = [];
    for (let i = 0; i < CONCURRENCY; i += 1)
      chains.push(JSON.parse((await exchange(codes.pop())).body).refresh_token);
    const narrow = JSON.parse((await exchange(codes.pop())).body);

    let next = 0;
    const results = [];
    const baseline = await measure(
      'baseline (bare Fastify)',
      () => request(`http://127.0.0.1:${barePort}/v1/me`),
      forSeconds(SECONDS),
    );
    results.push(baseline);
    results.push(
      await measure(
        'token: code exchange',
        () => exchange(codes[next++]),
        (n) => next >= codes.length || n >= codes.length,
      ),
    );
    results.push(
      await measure(
        'token: refresh (rotating)',
        async (worker) => {
          const res = await request(
            `${base}/oauth/token`,
            form({ ...CLIENT, grant_type: 'refresh_token', refresh_token: chains[worker] }),
          );
          if (res.status === 200) chains[worker] = JSON.parse(res.body).refresh_token;
          return res;
        },
        forSeconds(SECONDS),
      ),
    );

    // A seatime:read-only token: userinfo answers {sub} from the principal alone, so the
    // request costs exactly what bearer authentication costs.
    const refreshed = await request(
      `${base}/oauth/token`,
      form({
        ...CLIENT,
        grant_type: 'refresh_token',
        refresh_token: narrow.refresh_token,
        scope: 'seatime:read',
      }),
    );
    const token = JSON.parse(refreshed.body).access_token;
    const userinfo = () =>
      request(`${base}/oauth/userinfo`, { headers: { authorization: `Bearer ${token}` } });
    await userinfo(); // fills the cache
    const before = await counters(env);
    const cached = await measure('userinfo: cached-token authentication', userinfo, forSeconds(SECONDS));
    const after = await counters(env);
    cached.redis_commands_per_request = Number(((after.redis - before.redis) / cached.requests).toFixed(3));
    cached.db_transactions_per_request = Number(((after.db - before.db) / cached.requests).toFixed(4));
    results.push(cached);

    for (const r of results) r.ratio_to_baseline = Number((r.rps / baseline.rps).toFixed(3));
    report(results);
    return results;
  } finally {
    for (const c of children) c.kill('SIGTERM');
    agent.destroy();
    await resources?.cleanup();
  }
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
  const [info] = await redisCommands(env.REDIS_URL, [['INFO', 'stats']]);
  const redis = Number(/total_commands_processed:(\d+)/.exec(String(info))?.[1] ?? NaN);
  return { db: Number(rows[0].n), redis };
}

function report(results) {
  const when = new Date().toISOString();
  const dir = path.join(ROOT, 'bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `oauth-${when.replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(
    file,
    `${JSON.stringify({ when, concurrency: CONCURRENCY, seconds: SECONDS, results }, null, 2)}\n`,
  );
  console.log(`\nauth-server, ${CONCURRENCY} keep-alive clients (results: ${path.relative(ROOT, file)})`);
  console.log('measure                                   req/s   ratio   p50 ms   p99 ms');
  for (const r of results) {
    console.log(
      `${r.name.padEnd(40)} ${String(r.rps).padStart(6)}   ${r.ratio_to_baseline.toFixed(3)}   ${String(r.p50_ms).padStart(6)}   ${String(r.p99_ms).padStart(6)}`,
    );
  }
  const cached = results.find((r) => r.redis_commands_per_request !== undefined);
  console.log(
    `cache hit: ${cached.redis_commands_per_request} Redis commands and ${cached.db_transactions_per_request} database transactions per request`,
  );
}

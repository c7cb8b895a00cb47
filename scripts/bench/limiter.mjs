// `npm run bench -- limiter`: what the rate limiter's script (RATE_LIMIT_LUA) costs Redis per call,
// on a private Redis (no persistence) that nothing else uses. One client is driven at a steady
// BENCH_RATE (2,000 calls/s) with windows scaled so that, as in production at the limits, its day
// window holds ~10,000 admissions and its minute window ~600, trimmed as they age. Two scenarios: every call admitted (limits out of reach: each call writes, the dearer case), and
// a client at its limits (600/10,000) driven at twice the rate it may use, so half its calls are
// refused. After one day window of warm-up, INFO commandstats is reset and BENCH_CALLS (20,000)
// calls measured: Redis CPU µs per EVALSHA (the whole script), the commands it ran inside (how many,
// their own µs), and per call of Redis's process (/proc, network included). MEMORY USAGE of the
// client's list at the end. BENCH_ROUNDS (3) rounds; the summary is their median. Results: bench/results/limiter-<time>.json.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { ROOT } = require('../lib/deps.cjs');
require('../lib/ts-register.cjs');
const Redis = require('ioredis');
const { which } = require('../lib/procs.cjs');
const { freePort } = require('../lib/net.cjs');
const { cpuMicros } = require('./procstat.cjs');
const { median: medianOf } = require('./stats.cjs');
const { RATE_LIMIT_LUA, rateLimitKey } = require(path.join(ROOT, 'libs/security/src/limits/rate-limit.ts'));

const RATE = Number(process.env.BENCH_RATE ?? '2000');
const CALLS = Number(process.env.BENCH_CALLS ?? '20000');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? '3');
const DAY_ENTRIES = 10_000;
const MINUTE_ENTRIES = 600;
/** Windows in µs that hold ~600 and ~10,000 calls at RATE calls/s. */
const MINUTE_US = Math.round((MINUTE_ENTRIES / RATE) * 1e6);
const DAY_US = Math.round((DAY_ENTRIES / RATE) * 1e6);

const SCENARIOS = {
  // Limits out of reach: every call is admitted and writes.
  admitted: { minuteLimit: 1_000_000, dayLimit: 1_000_000, rate: RATE },
  // At the limits, asking twice as often as they allow: about every other call refused.
  'at its limits': { minuteLimit: MINUTE_ENTRIES, dayLimit: DAY_ENTRIES, rate: 2 * RATE },
};

async function startRedis() {
  const bin = process.env.REDIS_SERVER_BIN || which('redis-server');
  if (!bin) throw new Error('redis-server is not installed: run `npm test` once, which installs it');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-limiter-'));
  const port = await freePort();
  const child = spawn(
    bin,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
  const redis = new Redis({ port, host: '127.0.0.1', retryStrategy: () => 100 });
  // Refused connections until redis-server listens are expected; a failure later fails a call.
  redis.on('error', () => {});
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('redis-server did not start within 10 s')), 10_000);
    redis.once('ready', () => resolve(clearTimeout(timer)));
  });
  return {
    redis,
    pid: child.pid,
    stop: async () => {
      redis.disconnect();
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Calls and µs of each command INFO commandstats lists (the script's own commands among them). */
function commandStats(info) {
  const stats = {};
  for (const line of info.split('\r\n')) {
    const match = /^cmdstat_([^:]+):(.*)$/.exec(line);
    if (!match) continue;
    const fields = Object.fromEntries(match[2].split(',').map((kv) => kv.split('=')));
    stats[match[1]] = { calls: Number(fields.calls), usec: Number(fields.usec) };
  }
  return stats;
}

/** `count` calls at `rate` per second, paced on the wall clock; resolves with the replies. */
async function drive(redis, sha, scenario, clientId, count) {
  const key = rateLimitKey(clientId);
  const windows = [scenario.minuteLimit, MINUTE_US, scenario.dayLimit, DAY_US].map(String);
  const started = performance.now();
  let sent = 0;
  let admitted = 0;
  const pending = [];
  while (sent < count) {
    const due = Math.min(count, Math.floor(((performance.now() - started) / 1000) * scenario.rate));
    for (; sent < due; sent++) {
      pending.push(
        redis.evalsha(sha, 1, key, ...windows).then((reply) => {
          if (reply[0] === 1) admitted++;
        }),
      );
    }
    if (pending.length > 1000) await Promise.all(pending.splice(0));
    await new Promise((r) => setTimeout(r, 2));
  }
  await Promise.all(pending);
  return { admitted, seconds: (performance.now() - started) / 1000 };
}

async function measure(server, scenarioName, round) {
  const { redis, pid } = server;
  const scenario = SCENARIOS[scenarioName];
  const sha = await redis.script('LOAD', RATE_LIMIT_LUA);
  const clientId = `bench-${round}-${scenarioName.replace(/ /g, '-')}`;
  // Warm-up: one day window, so both windows are full and trimming as they age.
  await drive(redis, sha, scenario, clientId, Math.ceil((DAY_US / 1e6) * scenario.rate) + 1000);
  await redis.config('RESETSTAT');
  const cpuBefore = cpuMicros([pid]);
  const { admitted, seconds } = await drive(redis, sha, scenario, clientId, CALLS);
  const redisCpu = cpuMicros([pid]) - cpuBefore;
  const stats = commandStats(await redis.info('commandstats'));
  const stat = stats.evalsha;
  // What the script ran inside, per call: how many commands and their own µs (the rest of the
  // script's µs is Lua and the calls' overhead).
  const inner = Object.entries(stats).filter(([name]) => name !== 'evalsha' && !name.startsWith('config'));
  const innerCalls = inner.reduce((sum, [, c]) => sum + c.calls, 0);
  const innerUsec = inner.reduce((sum, [, c]) => sum + c.usec, 0);
  const key = rateLimitKey(clientId);
  return {
    scenario: scenarioName,
    round,
    calls: stat.calls,
    admitted,
    seconds: Number(seconds.toFixed(1)),
    redis_script_us_per_call: Number((stat.usec / stat.calls).toFixed(2)),
    redis_process_cpu_us_per_call: Number((redisCpu / CALLS).toFixed(1)),
    commands_per_call: Number((innerCalls / stat.calls).toFixed(2)),
    commands_us_per_call: Number((innerUsec / stat.calls).toFixed(2)),
    commands: Object.fromEntries(
      inner.map(([name, c]) => [
        name,
        {
          per_call: Number((c.calls / stat.calls).toFixed(2)),
          us_each: Number((c.usec / c.calls).toFixed(2)),
        },
      ]),
    ),
    // The list's header is not a time.
    day_window_entries_at_end: (await redis.llen(key)) - 1,
    memory_bytes: await redis.memory('USAGE', key, 'SAMPLES', '0'),
  };
}

export async function benchLimiter() {
  const server = await startRedis();
  const results = [];
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      for (const scenarioName of Object.keys(SCENARIOS)) {
        const r = await measure(server, scenarioName, round);
        results.push(r);
        console.log(
          `round ${round}  ${scenarioName.padEnd(13)} ${String(r.redis_script_us_per_call).padStart(6)} µs/call (script; ${r.commands_per_call} commands, ${r.commands_us_per_call} µs of them)  ${String(r.redis_process_cpu_us_per_call).padStart(6)} µs/call (redis process)  admitted ${r.admitted}/${r.calls}  day entries ${r.day_window_entries_at_end}  ${(r.memory_bytes / 1e6).toFixed(3)} MB`,
        );
      }
    }
  } finally {
    await server.stop();
  }
  const redisVersion = (await import('node:child_process'))
    .execFileSync(process.env.REDIS_SERVER_BIN || which('redis-server'), ['--version'], { encoding: 'utf8' })
    .trim();
  const when = new Date().toISOString();
  const dir = path.join(ROOT, 'bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `limiter-${when.replace(/[:.]/g, '-')}.json`);
  // The median of the rounds: the machine's other work shows as an outlier round, not as a trend.
  const median = (values) => Number(medianOf(values).toFixed(2));
  const summary = {};
  for (const scenarioName of Object.keys(SCENARIOS)) {
    const rounds = results.filter((r) => r.scenario === scenarioName);
    const of = (field) => median(rounds.map((r) => r[field]));
    summary[scenarioName] = {
      redis_script_us_per_call: of('redis_script_us_per_call'),
      redis_process_cpu_us_per_call: of('redis_process_cpu_us_per_call'),
      commands_per_call: of('commands_per_call'),
      commands_us_per_call: of('commands_us_per_call'),
      memory_bytes: of('memory_bytes'),
    };
  }
  console.log('median of the rounds:');
  for (const [name, m] of Object.entries(summary)) {
    console.log(
      `  ${name.padEnd(13)} ${String(m.redis_script_us_per_call).padStart(6)} µs/call (script)  ${String(m.commands_per_call).padStart(5)} commands  ${String(m.redis_process_cpu_us_per_call).padStart(6)} µs/call (redis process)  ${(m.memory_bytes / 1e6).toFixed(3)} MB`,
    );
  }
  fs.writeFileSync(
    file,
    `${JSON.stringify(
      {
        when,
        redis: redisVersion.replace(/ sha=\S+/, ''),
        rate_calls_per_s: RATE,
        calls_measured: CALLS,
        rounds: ROUNDS,
        windows_us: { minute: MINUTE_US, day: DAY_US },
        results,
        summary,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`results: ${path.relative(ROOT, file)}`);
}

// `npm run bench -- sponsorship`: the sponsorship API at volume, in an isolated database, vhost and
// Redis prefix, with the real auth-server (Basic credentials) and crew-api (entitlements) beside it.
//   list        GET /v1/partners/sponsorships?limit=50 for a partner with 100,000 seats: the first page
//               and a page deep in the list (a cursor near seat 90,000), one connection (latency) and
//               BENCH_CONNECTIONS connections (throughput)
//   reconcile   (first, on a fresh process, so its peak memory is its own) 50,000 refs against 50,000 live seats (e-mails in mixed case and padded, external
//               refs, 2,500 refs matching nothing, 2,500 seats matched by nothing): dry run, then apply
//               (2,500 cancellations, within the 10 % guard); wall time of each, and the peak resident
//               memory of the sponsorship-api process (VmHWM) before and after
// Results go to bench/results/sponsorship-<time>.json. BENCH_SECONDS (4), BENCH_CONNECTIONS (20).
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const autocannon = require('autocannon');
const { Client } = require('pg');
const { ROOT } = require('../lib/deps.cjs');
const apps = require('../lib/apps.cjs');
const { onboardPartner } = require('./partners.cjs');
const { freePort, waitForHttpOk } = require('../lib/net.cjs');
const { provision } = require('../lib/services.cjs');
const { createRunResources } = require('../lib/isolation.cjs');

const SECONDS = Number(process.env.BENCH_SECONDS ?? '4');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? '20');
const LIST_SEATS = 100_000;
const RECONCILE_SEATS = 50_000;
const UNMATCHED = 2_500;

function run(url, headers, connections) {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections, duration: SECONDS, headers }, (err, result) =>
      err ? reject(err) : resolve(result),
    );
  });
}

/** Peak and current resident memory of a process, in MiB (Linux /proc). */
function memory(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  return { peak_mib: Math.round(kib('VmHWM') / 1024), rss_mib: Math.round(kib('VmRSS') / 1024) };
}

/** A sponsoring partner's Basic authorization header. */
function onboard(env, clientId) {
  const { client_secret: secret } = onboardPartner(env, clientId, { sponsorship: true });
  return { authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}` };
}

/** `count` invited seats of one partner, invited one second apart, e-mails seat-<n>@<domain>. */
async function insertSeats(db, clientId, count, domain) {
  await db.query(
    `INSERT INTO sponsorship.seats (sponsorship_id, client_id, email, external_ref, status, invited_at,
                                    expires_at, updated_at)
     SELECT 'sps_bench_' || $1 || '_' || lpad(n::text, 7, '0'), $1, 'seat-' || n || '@' || $3,
            'ref-' || n, 'invited', now() - make_interval(secs => $2 - n), now() + interval '1 year', now()
       FROM generate_series(1, $2) AS n`,
    [clientId, count, domain],
  );
  await db.query('ANALYZE sponsorship.seats');
}

async function timed(fn) {
  const started = process.hrtime.bigint();
  const result = await fn();
  return { ms: Number((process.hrtime.bigint() - started) / 1_000_000n), result };
}

export async function benchSponsorship() {
  const children = [];
  let resources;
  let db;
  try {
    const servers = await provision({ log: (l) => console.error(l) });
    resources = await createRunResources(servers.env, { log: (l) => console.error(l) });
    const [authPort, crewPort, sponsorshipPort] = [await freePort(), await freePort(), await freePort()];
    const envFor = (port) =>
      apps.appEnv({
        services: { ...servers.env, ...resources.env },
        fixed: {
          APP_ENV: 'sandbox',
          LOG_LEVEL: 'warn',
          RATE_LIMIT_PER_MINUTE: 1_000_000,
          RATE_LIMIT_PER_DAY: 1_000_000,
          PORT: port,
        },
      });
    for (const app of ['auth-server', 'crew-api', 'sponsorship-api']) {
      await apps.runCli(app, 'migrate', envFor(0));
      await apps.runCli(app, 'seed', envFor(0));
    }
    const start = (app, port) => {
      const child = spawn(process.execPath, [apps.mainJs(app)], {
        env: envFor(port),
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      children.push(child);
      return child;
    };
    start('auth-server', authPort);
    start('crew-api', crewPort);
    const api = start('sponsorship-api', sponsorshipPort);
    for (const port of [authPort, crewPort, sponsorshipPort]) {
      await waitForHttpOk(`http://127.0.0.1:${port}/readyz`, { timeoutMs: 60000 });
    }
    const base = `http://127.0.0.1:${sponsorshipPort}/v1/partners/sponsorships`;
    db = new Client({ connectionString: envFor(0).DATABASE_URL });
    await db.connect();

    const lister = onboard(envFor(0), 'bench-list');
    const reconciler = onboard(envFor(0), 'bench-reconcile');
    console.error(`bench: inserting ${LIST_SEATS} + ${RECONCILE_SEATS} seats`);
    await insertSeats(db, 'bench-list', LIST_SEATS, 'list.bench.test');
    await insertSeats(db, 'bench-reconcile', RECONCILE_SEATS, 'reconcile.bench.test');

    // 50,000 refs: seats 1..47,500 named by e-mail (every other one upper-cased and padded) or by
    // external_ref; 2,500 refs that match nothing. Seats 47,501..50,000 are matched by nothing.
    const refs = [];
    for (let n = 1; n <= RECONCILE_SEATS - UNMATCHED; n += 1) {
      if (n % 3 === 0) refs.push(`ref-${n}`);
      else if (n % 2 === 0) refs.push(`  SEAT-${n}@Reconcile.Bench.Test `);
      else refs.push(`seat-${n}@reconcile.bench.test`);
    }
    for (let n = 1; n <= UNMATCHED; n += 1) refs.push(`nobody-${n}@elsewhere.test`);
    const reconcile = async (apply) => {
      const res = await fetch(`${base}/reconcile`, {
        method: 'POST',
        headers: { ...reconciler, 'content-type': 'application/json' },
        body: JSON.stringify({ active_refs: refs, apply }),
      });
      const body = await res.json();
      if (res.status !== 200) {
        throw new Error(`reconcile answered ${res.status}: ${JSON.stringify(body).slice(0, 300)}`);
      }
      return body;
    };
    const memoryBefore = memory(api.pid);
    const dryRuns = [];
    for (let i = 0; i < 3; i += 1) dryRuns.push(await timed(() => reconcile(false)));
    const dry = dryRuns[dryRuns.length - 1].result;
    if (dry.to_cancel.length !== UNMATCHED || dry.missing_refs.length !== UNMATCHED) {
      throw new Error(
        `reconcile diff is wrong: ${dry.to_cancel.length} to cancel, ${dry.missing_refs.length} missing (expected ${UNMATCHED} each)`,
      );
    }
    const applied = await timed(() => reconcile(true));
    if (applied.result.cancelled_count !== UNMATCHED) {
      throw new Error(`reconcile cancelled ${applied.result.cancelled_count}, expected ${UNMATCHED}`);
    }
    const memoryAfter = memory(api.pid);
    // A cursor deep in the list: follow next_cursor to the page holding seat ~90,000.
    let deepCursor;
    {
      let url = `${base}?limit=200`;
      for (let page = 0; page < 450; page += 1) {
        const res = await fetch(url, { headers: lister });
        if (res.status !== 200) throw new Error(`list answered ${res.status}: ${await res.text()}`);
        const body = await res.json();
        deepCursor = body.next_cursor;
        url = `${base}?limit=200&cursor=${deepCursor}`;
      }
    }
    const list = [];
    for (const [name, url] of [
      ['first page (limit 50)', `${base}?limit=50`],
      ['page at seat 90,000 (limit 50)', `${base}?limit=50&cursor=${deepCursor}`],
      ['status=invited first page', `${base}?limit=50&status=invited`],
    ]) {
      for (const connections of [1, CONNECTIONS]) {
        const r = await run(url, lister, connections);
        if (r.errors > 0 || r.non2xx > 0) throw new Error(`${name}: ${r.errors} errors, ${r.non2xx} non-2xx`);
        list.push({
          name,
          connections,
          rps: Math.round(r.requests.average),
          p50_ms: r.latency.p50,
          p99_ms: r.latency.p99,
        });
      }
    }

    const results = {
      list,
      reconcile: {
        refs: refs.length,
        live_seats: RECONCILE_SEATS,
        body_bytes: Buffer.byteLength(JSON.stringify({ active_refs: refs })),
        dry_run_ms: dryRuns.map((d) => d.ms),
        apply_ms: applied.ms,
        cancelled: applied.result.cancelled_count,
        memory_before: memoryBefore,
        memory_after: memoryAfter,
      },
    };
    report(results);
    return results;
  } finally {
    await db?.end().catch(() => undefined);
    for (const c of children) c.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1500));
    await resources?.cleanup();
  }
}

function report(results) {
  const when = new Date().toISOString();
  const dir = path.join(ROOT, 'bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `sponsorship-${when.replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, `${JSON.stringify({ when, seconds: SECONDS, ...results }, null, 2)}\n`);
  console.log(`\nsponsorship-api, ${LIST_SEATS} seats in the list (results: ${path.relative(ROOT, file)})`);
  console.log('list scenario                       conns    req/s   p50 ms   p99 ms');
  for (const r of results.list) {
    console.log(
      `${r.name.padEnd(34)} ${String(r.connections).padStart(5)}  ${String(r.rps).padStart(7)}   ${String(r.p50_ms).padStart(6)}   ${String(r.p99_ms).padStart(6)}`,
    );
  }
  const rc = results.reconcile;
  console.log(
    `\nreconcile, ${rc.refs} refs (${(rc.body_bytes / 1024 / 1024).toFixed(1)} MiB) against ${rc.live_seats} live seats:` +
      ` dry run ${rc.dry_run_ms.join(' / ')} ms; apply (${rc.cancelled} cancelled) ${rc.apply_ms} ms`,
  );
  console.log(
    `sponsorship-api memory: peak ${rc.memory_before.peak_mib} MiB before, ${rc.memory_after.peak_mib} MiB after` +
      ` (resident now ${rc.memory_after.rss_mib} MiB)`,
  );
}

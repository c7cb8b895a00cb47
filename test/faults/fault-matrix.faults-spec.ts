import fs from 'node:fs';
import path from 'node:path';
import { Pool } from 'pg';
import { ROOT } from '../../scripts/lib/apps.cjs';
import { startSystem, type RunningSystem } from '../support/system';
import { WebhookReceiver } from '../support/webhook-receiver';
import { KINDS, LoadGenerator, MAX_LATENCY_MS, recoveredAt, seedLoad, type Kind, type Sample } from './load';
import { faultsDir, PrivatePostgres, PrivateRedis, type Dependency } from './private-services';
import { PrivateBroker } from '../support/private-broker';
import { obtainTokenPairs, type TokenPair } from '../support/oauth/token-pairs';

/**
 * The fault matrix (issue 12, part 6): under steady mixed load through the gateway (crew reads
 * with OAuth bearer tokens, token refresh and revocation, sponsorship reads and provisions with
 * Basic credentials, record changes through the internal records API whose webhooks go to a
 * local receiver), Redis, RabbitMQ and PostgreSQL are stopped and started again, one at a time.
 * The apps are never restarted. What must hold:
 *   - callers get successes or well-formed 503s, never anything else, never after more than 3 s;
 *   - within 15 s of the dependency's return every kind of request succeeds again;
 *   - every record change committed (also while the broker is down) reaches the receiver, each
 *     event id at least once (raw duplicates are counted and reported);
 *   - a token whose revocation (or rotation) answered 200 is never accepted again.
 * The servers are the matrix's own (private ports and data under .run/faults-*), never the shared
 * ones. `npm run test:faults` runs the full profile and writes bench/results/faults-<time>.json;
 * `npm test` runs the short profile (FAULTS_PROFILE=short).
 */
const PROFILES = {
  full: { outageMs: 10_000, baselineMs: 5_000, workers: 6, thinkMs: 25, replicas: 2 },
  short: { outageMs: 4_000, baselineMs: 2_000, workers: 4, thinkMs: 40, replicas: 1 },
} as const;
const PROFILE = process.env.FAULTS_PROFILE === 'short' ? 'short' : 'full';
/** Processes per app: two in the full profile (every replica must recover on its own), FAULTS_REPLICAS overrides. */
const CONFIG = {
  ...PROFILES[PROFILE],
  replicas: Number(process.env.FAULTS_REPLICAS || PROFILES[PROFILE].replicas),
};
const SEED = Number(process.env.FAULTS_SEED || 12);
const RECOVERY_LIMIT_MS = 15_000;
/** A dependency counts as recovered once every kind succeeded after the last 503 and this long passed. */
const STABLE_MS = 2_000;
const VICTIMS_PER_DEPENDENCY = 5;
const WEBHOOK_PATH = '/faults';

jest.setTimeout(15 * 60_000);

interface Phase {
  readonly dependency: Dependency['name'];
  readonly stopBegan: number;
  readonly downAt: number;
  readonly startBegan: number;
  readonly upAt: number;
  recoveredAt?: number;
  readonly end: number;
  readonly revokes: { readonly when: string; readonly status: number }[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let dir: string;
let postgres: PrivatePostgres | undefined;
let redis: PrivateRedis | undefined;
let rabbit: PrivateBroker | undefined;
let receiver: WebhookReceiver | undefined;
let system: RunningSystem | undefined;
let db: Pool | undefined;
let load: LoadGenerator;
let loadStarted = 0;
const phases: Phase[] = [];
let report: Record<string, unknown> = {};
let committedEvents: { id: string; at: number }[] = [];
let receivedIds = new Map<string, number>();
/** Each app's /readyz after the matrix: the same processes, never restarted, all ready again. */
const readiness: Record<string, number> = {};

process.once('exit', () => {
  postgres?.stopNow();
  redis?.stopNow();
  rabbit?.stopNow();
});

beforeAll(async () => {
  dir = faultsDir();
  [postgres, redis, rabbit] = await Promise.all([
    PrivatePostgres.start(dir),
    PrivateRedis.start(dir),
    PrivateBroker.start('faults', dir),
  ]);
  receiver = await WebhookReceiver.start();
  system = await startSystem({
    label: 'faults',
    replicas: CONFIG.replicas,
    env: {
      DATABASE_URL: postgres.url,
      REDIS_URL: redis.url,
      // Both Redis roles on the one private server, so that its outage takes out the state and the cache.
      REDIS_CACHE_URL: redis.url,
      AMQP_URL: rabbit.url,
      SANDBOX_WEBHOOK_URL: receiver.endpoint(WEBHOOK_PATH),
      WEBHOOK_RETRY_SCHEDULE: '1s,1s,2s,2s,2s',
      RATE_LIMIT_PER_MINUTE: '1000000',
      RATE_LIMIT_PER_DAY: '1000000',
      LOG_LEVEL: 'warn',
    },
    readyTimeoutMs: 90_000,
  });
  db = new Pool({ connectionString: postgres.url, max: 2 });
  db.on('error', () => undefined);

  const workers = CONFIG.workers;
  const pairs = await obtainTokenPairs(
    system.baseUrl,
    `http://localhost:${system.gatewayPort}`,
    workers * 2 + VICTIMS_PER_DEPENDENCY * 3 + 3,
  );
  const readers = pairs.splice(0, workers);
  const spares = pairs.splice(0, workers);
  const victims: TokenPair[] = pairs;
  const pendingRevokes: TokenPair[] = [];

  seedLoad(SEED);
  load = new LoadGenerator(system.baseUrl, workers, spares, CONFIG.thinkMs);
  await load.warmUp(readers);
  loadStarted = Date.now();
  load.start(readers);
  await sleep(CONFIG.baselineMs);

  const deps: Dependency[] = [redis, rabbit, postgres];
  for (const dep of deps) {
    const revokes: { when: string; status: number }[] = [];
    const revoke = async (when: string) => {
      const pair = victims.shift();
      if (!pair) return;
      const status = await load.revoke(pair);
      revokes.push({ when, status });
      if (status !== 200) pendingRevokes.push(pair);
    };
    await revoke('before');
    const stopBegan = Date.now();
    const stopping = dep.stop();
    // Revocations while the dependency goes away and while it is away.
    await revoke('stopping');
    await stopping;
    const downAt = Date.now();
    await sleep(CONFIG.outageMs / 3);
    await revoke('down');
    await sleep(Math.max(0, stopBegan + CONFIG.outageMs - Date.now()));
    const startBegan = Date.now();
    await dep.start();
    const upAt = Date.now();
    await revoke('returned');
    const recovered = await waitForRecovery(upAt);
    await revoke('recovered');
    // Revocations that answered 503 are made again now, and must take effect.
    for (const pair of pendingRevokes.splice(0)) {
      const status = await load.revoke(pair);
      revokes.push({ when: 'retried', status });
    }
    await sleep(CONFIG.baselineMs);
    phases.push({
      dependency: dep.name,
      stopBegan,
      downAt,
      startBegan,
      upAt,
      recoveredAt: recovered,
      end: Date.now(),
      revokes,
    });
  }
  await load.stop();
  for (const [app, ports] of Object.entries(system.replicaPorts)) {
    for (const [i, port] of ports.entries()) {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
      readiness[ports.length > 1 ? `${app}#${i}` : app] = res?.status ?? 0;
    }
  }

  // Every committed record change's event, then wait for all of them at the receiver.
  const { rows } = await db.query<{ message_id: string; created_at: Date }>(
    `SELECT message_id, created_at FROM crew.outbox_messages
      WHERE routing_key = 'user.profile.updated' AND created_at >= $1 ORDER BY id`,
    [new Date(loadStarted - 1000)],
  );
  committedEvents = rows.map((r) => ({ id: r.message_id, at: r.created_at.getTime() }));
  const deadline = Date.now() + 90_000;
  for (;;) {
    receivedIds = receivedCounts();
    if (committedEvents.every((e) => receivedIds.has(e.id)) || Date.now() > deadline) break;
    await sleep(500);
  }
  await sleep(2000); // late duplicates, if any
  receivedIds = receivedCounts();
  report = buildReport();
  writeReport(report);
}, 15 * 60_000);

afterAll(async () => {
  await load?.stop().catch(() => undefined);
  await db?.end().catch(() => undefined);
  await system?.stop();
  await receiver?.close();
  await Promise.all([postgres?.destroy(), redis?.destroy(), rabbit?.destroy()]);
  if (dir && !process.env.FAULTS_KEEP) fs.rmSync(dir, { recursive: true, force: true });
}, 120_000);

function receivedCounts(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of receiver!.requests(WEBHOOK_PATH)) {
    const body = JSON.parse(r.rawBody.toString('utf8')) as { type?: string };
    if (body.type !== 'user.profile.updated') continue;
    const id = String(r.headers['x-svc-event-id']);
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

/**
 * The moment after which every kind of request succeeds again: the last non-success of a request
 * made after the dependency returned, followed by a success of every kind. Resolves undefined
 * when that has not happened within the recovery limit plus a margin.
 */
async function waitForRecovery(upAt: number): Promise<number | undefined> {
  const giveUpAt = upAt + RECOVERY_LIMIT_MS + 10_000;
  for (;;) {
    const at = recoveredAt(load.samples, upAt);
    if (at !== undefined && Date.now() - at >= STABLE_MS) return at;
    if (Date.now() > giveUpAt) return undefined;
    await sleep(250);
  }
}

function countsByKind(samples: readonly Sample[]) {
  const out: Partial<Record<Kind, { ok: number; unavailable: number; refused?: number; failure: number }>> =
    {};
  for (const kind of KINDS) {
    const of = samples.filter((s) => s.kind === kind);
    if (!of.length) continue;
    const refused = of.filter((s) => s.outcome === 'refused').length;
    out[kind] = {
      ok: of.filter((s) => s.outcome === 'ok').length,
      unavailable: of.filter((s) => s.outcome === 'unavailable').length,
      ...(refused ? { refused } : {}),
      failure: of.filter((s) => s.outcome === 'failure').length,
    };
  }
  return out;
}

function eventsBetween(from: number, to: number) {
  const committed = committedEvents.filter((e) => e.at >= from && e.at < to);
  const delivered = committed.filter((e) => receivedIds.has(e.id));
  const raw = committed.reduce((n, e) => n + (receivedIds.get(e.id) ?? 0), 0);
  return {
    committed: committed.length,
    delivered_distinct: delivered.length,
    missing: committed.length - delivered.length,
    duplicates: raw - delivered.length,
  };
}

/** A dependency's share of the run: from the end of the previous one's phase to the end of its own. */
function windowStartOf(i: number): number {
  return i === 0 ? loadStarted : phases[i - 1].end;
}

function buildReport(): Record<string, unknown> {
  const samples = load.samples;
  const dependencies = phases.map((p, i) => {
    const windowStart = windowStartOf(i);
    const inOutage = samples.filter((s) => s.startedAt >= p.stopBegan && s.startedAt < p.upAt);
    const inWindow = samples.filter((s) => s.startedAt >= p.stopBegan && s.startedAt < p.end);
    return {
      dependency: p.dependency,
      stop_began_at_ms: p.stopBegan - loadStarted,
      up_at_ms: p.upAt - loadStarted,
      outage_ms: p.upAt - p.stopBegan,
      stop_ms: p.downAt - p.stopBegan,
      start_ms: p.upAt - p.startBegan,
      recover_ms: p.recoveredAt === undefined ? null : p.recoveredAt - p.upAt,
      max_latency_ms: Math.max(0, ...inWindow.map((s) => s.ms)),
      requests_during_outage: countsByKind(inOutage),
      requests_phase: countsByKind(inWindow),
      revocations: p.revokes,
      revoked_token_acceptances: load.revokedAcceptances.filter(
        (a) => a.startedAt >= windowStartOf(i) && a.startedAt < p.end,
      ).length,
      events: eventsBetween(windowStart, p.end),
    };
  });
  const received = [...receivedIds.values()];
  return {
    profile: PROFILE,
    config: { ...CONFIG, seed: SEED, recovery_limit_ms: RECOVERY_LIMIT_MS, max_latency_ms: MAX_LATENCY_MS },
    started_at: new Date(loadStarted).toISOString(),
    duration_ms: (phases.at(-1)?.end ?? Date.now()) - loadStarted,
    requests_total: samples.length,
    requests: countsByKind(samples),
    max_latency_ms: Math.max(0, ...samples.map((s) => s.ms)),
    slowest: [...samples]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 5)
      .map((s) => ({ kind: s.kind, ms: s.ms, status: s.status, at_ms: s.startedAt - loadStarted })),
    failures: samples.filter((s) => s.outcome === 'failure').length,
    // 401s for tokens whose revocation or rotation answered 503 (see Outcome in support/load.ts).
    refused_after_unconfirmed_revocation: samples.filter((s) => s.outcome === 'refused').length,
    failure_examples: samples
      .filter((s) => s.outcome === 'failure')
      .slice(0, 20)
      .map((s) => ({
        ...s,
        at_ms: s.startedAt - loadStarted,
        // What the same worker did in the 20 s before: the story of a refused token.
        worker_before:
          s.worker < 0
            ? []
            : samples
                .filter(
                  (o) =>
                    o.worker === s.worker && o.startedAt >= s.startedAt - 20_000 && o.startedAt < s.startedAt,
                )
                .filter((o) => o.kind === 'token_refresh' || o.outcome !== 'ok' || o.token !== s.token)
                .slice(-12)
                .map((o) => `${o.startedAt - loadStarted} ${o.kind} ${o.status} ${o.token ?? ''}`),
      })),
    dependencies,
    events: {
      committed: committedEvents.length,
      record_changes_answered_200: load.recordChangesCommitted,
      delivered_distinct: committedEvents.filter((e) => receivedIds.has(e.id)).length,
      missing: committedEvents.filter((e) => !receivedIds.has(e.id)).map((e) => e.id),
      raw_deliveries: received.reduce((n, c) => n + c, 0),
      duplicates: received.reduce((n, c) => n + c - 1, 0),
    },
    apps_ready_after: readiness,
    revoked_tokens: load.revokedCount(),
    revoked_token_acceptances: load.revokedAcceptances,
  };
}

function writeReport(data: Record<string, unknown>): void {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const file =
    PROFILE === 'full'
      ? path.join(ROOT, 'bench', 'results', `faults-${stamp}.json`)
      : path.join(dir, '..', `faults-short-${stamp}.json`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
  console.log(`fault matrix (${PROFILE}): ${path.relative(ROOT, file)}\n${summaryTable(data)}`);
}

function summaryTable(data: Record<string, unknown>): string {
  const deps = data.dependencies as {
    dependency: string;
    outage_ms: number;
    recover_ms: number | null;
    max_latency_ms: number;
    requests_phase: Record<string, { ok: number; unavailable: number; failure: number }>;
    events: { committed: number; delivered_distinct: number; duplicates: number };
  }[];
  const lines = [
    'dependency | outage | recovered after | max latency | ok / 503 / failed | events committed / delivered / dup',
  ];
  for (const d of deps) {
    const sum = Object.values(d.requests_phase).reduce(
      (a, c) => ({
        ok: a.ok + c.ok,
        unavailable: a.unavailable + c.unavailable,
        failure: a.failure + c.failure,
      }),
      { ok: 0, unavailable: 0, failure: 0 },
    );
    lines.push(
      `${d.dependency} | ${(d.outage_ms / 1000).toFixed(1)} s | ${d.recover_ms === null ? 'never' : `${(d.recover_ms / 1000).toFixed(1)} s`} | ${d.max_latency_ms} ms | ${sum.ok} / ${sum.unavailable} / ${sum.failure} | ${d.events.committed} / ${d.events.delivered_distinct} / ${d.events.duplicates}`,
    );
  }
  return lines.join('\n');
}

describe(`fault matrix (${PROFILE}): Redis, RabbitMQ and PostgreSQL stopped and started under load`, () => {
  it('every dependency was stopped and started', () => {
    expect(phases.map((p) => p.dependency)).toEqual(['redis', 'rabbitmq', 'postgres']);
  });

  it('the apps, never restarted, are all ready afterwards', () => {
    expect(Object.keys(readiness).length).toBeGreaterThanOrEqual(5);
    expect(Object.entries(readiness).filter(([, status]) => status !== 200)).toEqual([]);
  });

  it('answers only successes or 503s, each within 3 s', () => {
    const failures = load.samples
      .filter((s) => s.outcome === 'failure')
      .map((s) => `${s.kind} +${s.startedAt - loadStarted} ms: ${s.status} in ${s.ms} ms ${s.detail ?? ''}`);
    expect(failures.slice(0, 30)).toEqual([]);
    expect(Math.max(...load.samples.map((s) => s.ms))).toBeLessThanOrEqual(MAX_LATENCY_MS);
  });

  it('every kind of request succeeds again within 15 s of the dependency’s return', () => {
    const recovery = phases.map((p) => ({
      dependency: p.dependency,
      recover_ms: p.recoveredAt === undefined ? null : p.recoveredAt - p.upAt,
    }));
    for (const r of recovery) {
      expect(r).toEqual({ dependency: r.dependency, recover_ms: expect.any(Number) });
      expect(r.recover_ms).toBeLessThanOrEqual(RECOVERY_LIMIT_MS);
    }
  });

  it('delivers every committed record change, each event id at least once', () => {
    const events = report.events as { committed: number; delivered_distinct: number; missing: string[] };
    expect(events.committed).toBeGreaterThan(0);
    expect(events.missing).toEqual([]);
    expect(events.delivered_distinct).toBe(events.committed);
    // Every PATCH that answered 200 committed its change (and no other change was committed).
    expect(events.committed).toBeGreaterThanOrEqual(load.recordChangesCommitted);
    // Changes made while the broker was down are among them.
    const broker = phases.find((p) => p.dependency === 'rabbitmq')!;
    expect(
      committedEvents.filter((e) => e.at >= broker.downAt && e.at < broker.startBegan).length,
    ).toBeGreaterThan(0);
  });

  it('never accepts a token whose revocation or rotation answered 200', () => {
    expect(load.revokedCount()).toBeGreaterThan(0);
    expect(load.revokedAcceptances).toEqual([]);
  });

  it('revocations either take effect or answer 503, and a retried one takes effect', () => {
    const statuses = phases.flatMap((p) => p.revokes.map((r) => `${p.dependency}/${r.when}: ${r.status}`));
    const bad = statuses.filter((s) => !/: (200|503)$/.test(s) || (/retried/.test(s) && !/: 200$/.test(s)));
    expect(bad).toEqual([]);
  });
});

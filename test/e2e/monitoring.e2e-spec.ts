import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { stringify } from 'yaml';
import { NEST_APPS, type NestAppName } from '@svc/contracts';
import { rateLimitKey } from '../../libs/security/src/limits/rate-limit';
import { freePorts } from '../../scripts/lib/net.cjs';
import { eventually } from '../support/services';
import { startSystem, type RunningSystem } from '../support/system';
import { WebhookReceiver } from '../support/webhook-receiver';
import { requiredSeries, ruleGroups } from '../monitoring/monitoring';
import { A, authorize, BASIC_A, bearer, INTERNAL, json, postForm, refresh } from '../support/e2e-client';

/**
 * A real Prometheus (Debian's `prometheus`, installed by `npm test`) scrapes every process of the
 * running system while partners use it: every metric the alerts and the Grafana dashboard query
 * (k8s/components/monitoring) exists, with every label their PromQL filters or groups by, so a
 * renamed metric or label fails here rather than silently emptying a panel or an alert. The
 * rules themselves load and evaluate without error against the real series.
 */
jest.setTimeout(180_000);

const HOOK = '/monitoring-hooks';
const RATE_LIMIT_PER_MINUTE = 100;

/**
 * Where Prometheus scrapes one process of an app (host:port; path /metrics): the app's own
 * metrics port (METRICS_PORT), which each process logs when it listens ("<app> serving metrics",
 * with `port`); the e2e system gives each process a free port of its own.
 */
function metricsTarget(system: RunningSystem, app: NestAppName, replica: number): string {
  const log = path.join(system.logDir, `${replica === 0 ? app : `${app}-${replica + 1}`}.log`);
  for (const line of fs.readFileSync(log, 'utf8').split('\n')) {
    if (!line.includes('serving metrics')) continue;
    try {
      const entry = JSON.parse(line) as { msg?: string; port?: unknown };
      if (/serving metrics/.test(entry.msg ?? '') && typeof entry.port === 'number')
        return `127.0.0.1:${entry.port}`;
    } catch {
      /* not a JSON line */
    }
  }
  throw new Error(`${app} replica ${replica} logged no "serving metrics" line in ${log}`);
}

function prometheusBinary(): string {
  const bin = process.env.PROMETHEUS_BIN || '/usr/bin/prometheus';
  if (!fs.existsSync(bin))
    throw new Error(`prometheus not found at ${bin}: npm test installs Debian's prometheus package`);
  return bin;
}

let system: RunningSystem;
let receiver: WebhookReceiver;
let prometheus: ChildProcess | undefined;
let promUrl: string;
let workDir: string;
const redis = new Redis(process.env.REDIS_URL!, {
  keyPrefix: process.env.REDIS_KEY_PREFIX,
  lazyConnect: true,
});

/** Prometheus' HTTP API (fetch: `request` checks answers against the service's OpenAPI description). */
async function promApi<T>(p: string, params: Record<string, string> = {}): Promise<T> {
  const res = await fetch(`${promUrl}${p}?${new URLSearchParams(params).toString()}`);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`Prometheus ${p} answered ${res.status}: ${text}`);
  return (JSON.parse(text) as { data: T }).data;
}

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  system = await startSystem({
    label: 'monitoring',
    env: {
      // The first attempt fails, the retry (after 1 s) succeeds.
      SANDBOX_WEBHOOK_URL: receiver.endpoint(HOOK, (n) => (n <= 1 ? 500 : 204)),
      WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s',
      RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT_PER_MINUTE),
    },
  });

  // Prometheus: every process of every app as a static target, labelled as the PodMonitors label
  // them (app from the pod label, honor_labels so the apps' own `app` label stays).
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'crew-prometheus-'));
  const [port] = await freePorts(1);
  promUrl = `http://127.0.0.1:${port}`;
  fs.writeFileSync(path.join(workDir, 'rules.yaml'), stringify({ groups: ruleGroups() }));
  const targets = NEST_APPS.flatMap((app) =>
    system.replicaPorts[app].map((_, replica) => ({
      targets: [metricsTarget(system, app, replica)],
      labels: { app, pod: `${app}-${replica}` },
    })),
  );
  fs.writeFileSync(
    path.join(workDir, 'prometheus.yml'),
    stringify({
      global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
      rule_files: ['rules.yaml'],
      scrape_configs: [
        { job_name: 'crew-records', honor_labels: true, metrics_path: '/metrics', static_configs: targets },
      ],
    }),
  );
  const out = fs.openSync(path.join(system.logDir, 'prometheus.log'), 'a');
  prometheus = spawn(
    prometheusBinary(),
    [
      `--config.file=${path.join(workDir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(workDir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--storage.tsdb.retention.time=1h',
    ],
    { cwd: workDir, stdio: ['ignore', out, out] },
  );
  fs.closeSync(out);
  await eventually(async () => {
    const res = await fetch(`${promUrl}/-/ready`);
    if (res.status !== 200) throw new Error(`prometheus not ready: ${res.status} ${await res.text()}`);
    return true;
  }, 30_000);

  await redis.connect();
  await redis.del(rateLimitKey(A.client_id));
  await driveTraffic();
}, 240_000);

afterAll(async () => {
  if (prometheus && prometheus.exitCode === null) {
    const exited = new Promise((resolve) => prometheus!.once('exit', resolve));
    prometheus.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    if (prometheus.exitCode === null) prometheus.kill('SIGKILL');
  }
  await system?.stop();
  await receiver?.close();
  redis.disconnect();
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
}, 60_000);

/**
 * What partners and members do, so that every series the rules and the dashboard read exists:
 * sign-in and consent (consent-ui's RPCs to auth-server), a code exchange that succeeds and one
 * that fails, a refresh, API reads (token cache miss then hit), a seat provisioned and activated
 * (seat transitions, crew-api's event to sponsorship-api), a webhook whose first attempt fails and
 * whose retry is delivered, and a partner pushed over its rate limit (429).
 */
async function driveTraffic(): Promise<void> {
  const url = (p: string) => `${system.baseUrl}${p}`;
  const pair = await authorize(system, 'alex.morgan@sandbox.test');
  const failed = await postForm(url('/oauth/token'), {
    grant_type: 'authorization_code',
    code: 'no-such-code',
    redirect_uri: A.redirect_uris[0],
    code_verifier: 'x'.repeat(43),
    client_id: A.client_id,
    client_secret: A.client_secret,
  });
  expect(failed.status).toBe(400);
  const refreshed = await refresh(system.baseUrl, pair.refresh_token);
  expect(refreshed.status).toBe(200);
  const token = refreshed.json<{ access_token: string }>().access_token;
  for (let i = 0; i < 3; i++) expect((await bearer(url('/v1/me'), token)).status).toBe(200);

  const email = `e2e-monitoring-${randomBytes(4).toString('hex')}@sandbox.test`;
  const seat = await json(url('/v1/partners/sponsorships'), 'POST', BASIC_A, { email, external_ref: email });
  expect(seat.status).toBe(201);
  const signUp = await json(url('/internal/v1/crew'), 'POST', INTERNAL, {
    email,
    name: 'E2E Bosun',
    role: 'Bosun',
    country: 'NO',
  });
  expect(signUp.status).toBe(201);
  const seatId = seat.json<{ sponsorship_id: string }>().sponsorship_id;
  await eventually(async () => {
    const res = await json(url(`/v1/partners/sponsorships/${seatId}`), 'GET', BASIC_A);
    if (res.json<{ status: string }>().status !== 'active') throw new Error('seat not active yet');
    return true;
  }, 20_000);

  expect((await bearer(url('/v1/webhooks/test'), token)).status).toBeLessThan(300);
  await eventually(async () => {
    if (receiver.requests(HOOK).length < 2) throw new Error('no retried delivery yet');
    return true;
  }, 30_000);

  let refused = 0;
  for (let i = 0; i < RATE_LIMIT_PER_MINUTE + 5 && refused === 0; i++)
    if ((await bearer(url('/v1/me'), token)).status === 429) refused++;
  expect(refused).toBe(1);
}

describe('Prometheus scraping the running system', () => {
  it('scrapes every process of every app', async () => {
    const up = await eventually(async () => {
      const result = await promApi<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(
        '/api/v1/query',
        { query: 'up' },
      );
      if (result.result.length < NEST_APPS.length * system.replicas)
        throw new Error('targets not scraped yet');
      return result.result;
    }, 30_000);
    const down = up.filter((s) => s.value[1] !== '1').map((s) => `${s.metric.app} ${s.metric.instance}`);
    expect(down).toEqual([]);
    expect(new Set(up.map((s) => s.metric.app))).toEqual(new Set(NEST_APPS));
  });

  it('has every metric the alerts and the dashboard query, with every label they filter or group by', async () => {
    const need = requiredSeries();
    expect(need.size).toBeGreaterThan(15);
    const problems = async () => {
      const missing: string[] = [];
      for (const [series, { metric, labels, where }] of need) {
        const found = await promApi<Record<string, string>[]>('/api/v1/series', {
          'match[]': series,
          start: String(Math.floor(Date.now() / 1000) - 600),
        });
        const want = [...labels];
        const complete = found.some((s) => want.every((l) => l in s));
        if (!complete) {
          const seen = [...new Set(found.flatMap((s) => Object.keys(s)))].filter((l) => l !== '__name__');
          missing.push(
            found.length === 0
              ? `${metric} (${series}): no series; used by ${[...where].join(', ')}`
              : `${metric} (${series}): no series with labels {${want.join(', ')}} (has ${seen.join(', ')}); used by ${[...where].join(', ')}`,
          );
        }
      }
      return missing;
    };
    // A few scrapes after the traffic: every series is there by then, or never.
    let missing = await problems();
    for (let i = 0; i < 10 && missing.length > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      missing = await problems();
    }
    expect(missing).toEqual([]);
  });

  it('loads the recording rules and alerts, and evaluates them without error on the real series', async () => {
    const rules = await eventually(async () => {
      const data = await promApi<{
        groups: { name: string; rules: { name: string; health: string; lastError?: string }[] }[];
      }>('/api/v1/rules');
      const all = data.groups.flatMap((g) => g.rules);
      if (all.length === 0 || all.some((r) => r.health === 'unknown'))
        throw new Error('rules not evaluated yet');
      return all;
    }, 30_000);
    const expected = ruleGroups().flatMap((g) => g.rules.map((r) => r.alert ?? r.record));
    expect(rules.map((r) => r.name).sort()).toEqual([...expected].sort());
    expect(rules.filter((r) => r.health !== 'ok').map((r) => `${r.name}: ${r.lastError}`)).toEqual([]);
  });

  it('computes the request rate of every HTTP app (recording rules), above zero where traffic kept coming', async () => {
    // A series counts from its first scrape on (requests in the second it is born add no rate), so
    // crew-api gets requests spread over several scrapes: unauthenticated reads, answered 401.
    for (let i = 0; i < 10; i++) {
      await fetch(`${system.baseUrl}/v1/me`).then((res) => res.arrayBuffer());
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const rates = await eventually(async () => {
      const r = await promApi<{ result: { metric: { app: string }; value: [number, string] }[] }>(
        '/api/v1/query',
        { query: 'app:http_requests:rate5m' },
      );
      const byApp = new Map(r.result.map((s) => [s.metric.app, Number(s.value[1])]));
      if (!((byApp.get('crew-api') ?? 0) > 0)) throw new Error('no crew-api request rate yet');
      return byApp;
    }, 30_000);
    expect([...rates.keys()]).toEqual(
      expect.arrayContaining(['crew-api', 'auth-server', 'consent-ui', 'sponsorship-api']),
    );
  });
});

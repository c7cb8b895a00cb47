/**
 * The alerts are valid and tested: `promtool check rules` on the PrometheusRule's groups and
 * `promtool test rules` on k8s/components/monitoring/alerts.test.yaml, with promtool's output as
 * the failure message. Every alert pages or files a ticket, names its app (and partner), has a
 * test case that fires and one that stays quiet, and a runbook page that the runbook index links.
 *
 * promtool comes from Debian's `prometheus` package: `npm test` installs it (scripts/lib/
 * services.cjs, ensureUnitTools); PROMTOOL_BIN may point at another one.
 */
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import {
  alerts,
  metricUses,
  REQUIRED_ALERTS,
  ROOT,
  ruleGroups,
  RULES_TEST_FILE,
  RUNBOOKS_DIR,
  runbookPath,
  RUNBOOK_URL_PREFIX,
} from './monitoring';

function promtool(): string {
  const candidates = [process.env.PROMTOOL_BIN, '/usr/bin/promtool', '/usr/local/bin/promtool'];
  const found = candidates.find((c) => c && existsSync(c));
  if (found) return found;
  const which = spawnSync('sh', ['-c', 'command -v promtool'], { encoding: 'utf8' });
  if (which.status === 0 && which.stdout.trim()) return which.stdout.trim();
  throw new Error(
    "promtool not found: `npm test` installs Debian's prometheus package (apt-get install prometheus), or set PROMTOOL_BIN",
  );
}

function run(args: string[], cwd: string): void {
  const res = spawnSync(promtool(), args, { cwd, encoding: 'utf8', timeout: 120000 });
  if (res.status !== 0)
    throw new Error(
      `promtool ${args.join(' ')} failed (${res.status ?? res.signal}):\n${res.stdout}\n${res.stderr}`,
    );
}

describe('Prometheus rules (k8s/components/monitoring/prometheus-rules.yaml)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'crew-rules-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('pass promtool check rules', () => {
    writeFileSync(join(dir, 'all.yaml'), stringify({ groups: ruleGroups() }));
    run(['check', 'rules', 'all.yaml'], dir);
  });

  it('pass their promtool unit tests (alerts.test.yaml)', () => {
    // promtool compares annotations as well as labels: the copy it tests has none (their
    // templates are checked by `check rules` above, their content by the tests below).
    const groups = ruleGroups().map((g) => ({
      ...g,
      rules: g.rules.map(({ annotations: _annotations, ...rest }) => rest),
    }));
    writeFileSync(join(dir, 'rules.yaml'), stringify({ groups }));
    copyFileSync(RULES_TEST_FILE, join(dir, 'alerts.test.yaml'));
    run(['test', 'rules', 'alerts.test.yaml'], dir);
  });

  it('fail promtool when an alert is broken, so the two checks above can fail', () => {
    const groups = ruleGroups().map((g) => ({
      ...g,
      rules: g.rules.map(({ annotations: _annotations, ...rest }) =>
        rest.alert === 'OutboxBacklogOld' ? { ...rest, expr: rest.expr.replace('> 300', '> 3000') } : rest,
      ),
    }));
    writeFileSync(join(dir, 'rules.yaml'), stringify({ groups }));
    // Only the cases of that alert: the whole file again would double the time promtool takes.
    const file = parse(readFileSync(RULES_TEST_FILE, 'utf8'));
    const tests = file.tests.filter((t: { alert_rule_test?: { alertname: string }[] }) =>
      (t.alert_rule_test ?? []).some((c) => c.alertname === 'OutboxBacklogOld'),
    );
    expect(tests.length).toBeGreaterThan(0);
    writeFileSync(join(dir, 'outbox.test.yaml'), stringify({ ...file, tests }));
    expect(() => run(['test', 'rules', 'outbox.test.yaml'], dir)).toThrow(/OutboxBacklogOld/);
    writeFileSync(
      join(dir, 'bad.yaml'),
      stringify({ groups: [{ name: 'x', rules: [{ alert: 'X', expr: 'sum by (' }] }] }),
    );
    expect(() => run(['check', 'rules', 'bad.yaml'], dir)).toThrow(/promtool check rules/);
  });

  it('have every required alert, each a page or a ticket naming its app', () => {
    const byName = new Map(alerts().map((a) => [a.alert!, a]));
    expect(REQUIRED_ALERTS.filter((n) => !byName.has(n))).toEqual([]);
    for (const a of alerts()) {
      const where = a.alert;
      expect({ where, severity: ['page', 'ticket'].includes(a.labels?.severity ?? '') }).toEqual({
        where,
        severity: true,
      });
      for (const key of ['summary', 'description', 'runbook_url'])
        expect({ where, key, set: Boolean(a.annotations?.[key]) }).toEqual({ where, key, set: true });
      expect({ where, app: /\{\{ \$labels\.app \}\}/.test(a.annotations!.summary) }).toEqual({
        where,
        app: true,
      });
      // An alert grouped by partner says which one.
      if (metricUses(a.expr).some((u) => u.labels.has('partner')))
        expect({ where, partner: /\$labels\.partner/.test(a.annotations!.summary) }).toEqual({
          where,
          partner: true,
        });
    }
  });

  it('have a promtool case that fires and one that stays quiet for every alert', () => {
    const tests = parse(readFileSync(RULES_TEST_FILE, 'utf8')).tests as {
      alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[];
    }[];
    const cases = tests.flatMap((t) => t.alert_rule_test ?? []);
    const missing: string[] = [];
    for (const a of alerts()) {
      const own = cases.filter((c) => c.alertname === a.alert);
      if (!own.some((c) => (c.exp_alerts ?? []).length > 0)) missing.push(`${a.alert}: no firing case`);
      if (!own.some((c) => (c.exp_alerts ?? []).length === 0)) missing.push(`${a.alert}: no quiet case`);
    }
    expect(missing).toEqual([]);
  });
});

describe('runbooks (docs/operations)', () => {
  it('every runbook_url names an existing page, one page per alert', () => {
    const pages = new Map<string, string>();
    for (const a of alerts()) {
      const url = a.annotations?.runbook_url ?? '';
      const path = runbookPath(url);
      expect({ alert: a.alert, url, form: path !== undefined }).toEqual({ alert: a.alert, url, form: true });
      expect({ alert: a.alert, path, exists: existsSync(join(ROOT, path!)) }).toEqual({
        alert: a.alert,
        path,
        exists: true,
      });
      expect({ alert: a.alert, sharedWith: pages.get(path!) }).toEqual({
        alert: a.alert,
        sharedWith: undefined,
      });
      pages.set(path!, a.alert!);
    }
    expect(RUNBOOK_URL_PREFIX).toMatch(/^https:\/\/.+\/$/);
  });

  it('every page is linked from docs/operations/README.md, and docs/operations.md links the index', () => {
    const index = readFileSync(join(RUNBOOKS_DIR, 'README.md'), 'utf8');
    const pages = readdirSync(RUNBOOKS_DIR).filter((f) => f.endsWith('.md') && f !== 'README.md');
    expect(pages.length).toBeGreaterThanOrEqual(REQUIRED_ALERTS.length);
    expect(pages.filter((p) => !index.includes(`](${p})`) && !index.includes(`](./${p})`))).toEqual([]);
    const linked = [...index.matchAll(/\]\(\.?\/?([a-z0-9-]+\.md)\)/g)].map((m) => m[1]);
    expect(linked.filter((p) => !existsSync(join(RUNBOOKS_DIR, p)))).toEqual([]);
    expect(readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8')).toMatch(/\]\(operations\/README\.md\)/);
  });

  it('every alert page says how to confirm it with PromQL and which alert it is', () => {
    for (const a of alerts()) {
      const text = readFileSync(join(ROOT, runbookPath(a.annotations!.runbook_url)!), 'utf8');
      expect({ alert: a.alert, names: text.includes(a.alert!), promql: text.includes('```promql') }).toEqual({
        alert: a.alert,
        names: true,
        promql: true,
      });
    }
  });
});

describe('the PromQL reader of the scrape test', () => {
  it('finds metrics with the labels they are filtered and grouped by', () => {
    const uses = metricUses(
      'histogram_quantile(0.99, sum by (app, route, le) (rate(x_seconds_bucket{app=~"$app"}[$__rate_interval])))' +
        ' / on () max by (app) (y{dependency="postgres", b!~"z,}"}) and app:z:rate5m > 0 unless sum(w_total)',
    );
    expect(uses.map((u) => [u.series, u.metric, [...u.labels].sort()])).toEqual([
      ['x_seconds_bucket', 'x_seconds', ['app', 'le', 'route']],
      ['y', 'y', ['app', 'b', 'dependency']],
      ['w_total', 'w_total', []],
    ]);
    expect(metricUses('label_values(m_count, app)').map((u) => [u.series, [...u.labels]])).toEqual([
      ['m_count', ['app']],
    ]);
  });
});

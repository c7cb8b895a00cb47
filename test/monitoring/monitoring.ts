/**
 * The monitoring objects of k8s/components/monitoring as the specs see them: the PrometheusRule's
 * groups, the Grafana dashboard, the runbook URLs, and the metrics (with the labels they must
 * carry) that the PromQL of both uses.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

export const ROOT = join(__dirname, '..', '..');
export const MONITORING_DIR = join(ROOT, 'k8s', 'components', 'monitoring');
export const RULES_FILE = join(MONITORING_DIR, 'prometheus-rules.yaml');
export const RULES_TEST_FILE = join(MONITORING_DIR, 'alerts.test.yaml');
export const DASHBOARD_FILE = join(MONITORING_DIR, 'dashboard.json');
export const RUNBOOKS_DIR = join(ROOT, 'docs', 'operations');
/** Where the runbook_url annotations point: this repository's docs/operations/ on its Git host. */
export const RUNBOOK_URL_PREFIX = 'https://github.com/crew-records/crew-record-service/blob/main/';

export interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
export interface RuleGroup {
  name: string;
  rules: Rule[];
}

export function ruleGroups(): RuleGroup[] {
  const rule = parse(readFileSync(RULES_FILE, 'utf8'));
  if (rule?.kind !== 'PrometheusRule') throw new Error(`${RULES_FILE} is not a PrometheusRule`);
  return rule.spec.groups;
}

export const alerts = (groups = ruleGroups()): Rule[] =>
  groups.flatMap((g) => g.rules).filter((r) => r.alert !== undefined);

/** The repository path a runbook_url names, or undefined when it is not one of ours. */
export function runbookPath(url: string): string | undefined {
  if (!url.startsWith(RUNBOOK_URL_PREFIX)) return undefined;
  const path = url.slice(RUNBOOK_URL_PREFIX.length);
  return /^docs\/operations\/[a-z0-9-]+\.md$/.test(path) ? path : undefined;
}

/* eslint-disable @typescript-eslint/no-explicit-any */
export interface Panel {
  id: number;
  title: string;
  type: string;
  targets?: { refId: string; expr: string }[];
}
export function dashboard(): { title: string; panels: Panel[]; templating: { list: any[] } } {
  return JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8'));
}

/** Every PromQL expression of the rules and the dashboard (panels and query variables). */
export function allExpressions(): { where: string; expr: string }[] {
  const out: { where: string; expr: string }[] = [];
  for (const r of ruleGroups().flatMap((g) => g.rules))
    out.push({ where: `rule ${r.alert ?? r.record}`, expr: r.expr });
  const d = dashboard();
  for (const p of d.panels)
    for (const t of p.targets ?? []) out.push({ where: `panel "${p.title}" ${t.refId}`, expr: t.expr });
  for (const v of d.templating.list) {
    const q = typeof v.query === 'string' ? v.query : v.query?.query;
    if (v.type === 'query' && typeof q === 'string') out.push({ where: `variable ${v.name}`, expr: q });
  }
  return out;
}
/* eslint-enable @typescript-eslint/no-explicit-any */

// ---------------------------------------------------------------------------------------------
// A small PromQL reader: which metrics an expression selects, and which labels it filters on
// (matchers) or groups by (`by (...)` of an enclosing aggregation, `label_values(m, label)`).

const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'offset',
  'inf',
  'nan',
]);
const LIST_KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);

export interface MetricUse {
  /** The series name as written (`x_bucket` stays `x_bucket`: that is the series Prometheus has). */
  series: string;
  /** The metric family: the series name without a histogram's `_bucket`/`_count`/`_sum`. */
  metric: string;
  labels: Set<string>;
}

const HISTOGRAM_SUFFIX = /_(bucket|count|sum)$/;

/** The metrics an expression selects. Grafana variables ($app, $__rate_interval) may appear. */
export function metricUses(expr: string): MetricUse[] {
  const src = expr;
  const uses: MetricUse[] = [];
  // Frames of open parentheses: the grouping labels that apply inside them.
  const frames: string[][] = [];
  let pendingGroup: string[] | null = null;
  let labelValuesCall = false;
  let i = 0;
  const ident = /[a-zA-Z_:][a-zA-Z0-9_:]*/y;
  const skipSpace = () => {
    while (i < src.length && /\s/.test(src[i])) i++;
  };
  const readLabelList = (): string[] => {
    // at '('
    const end = src.indexOf(')', i);
    const list = src
      .slice(i + 1, end)
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    i = end + 1;
    return list;
  };
  const readMatchers = (): string[] => {
    // at '{'
    const names: string[] = [];
    i++;
    for (;;) {
      skipSpace();
      if (src[i] === '}') {
        i++;
        return names;
      }
      if (src[i] === ',') {
        i++;
        continue;
      }
      ident.lastIndex = i;
      const m = ident.exec(src);
      if (!m) throw new Error(`cannot read the matchers of ${JSON.stringify(expr)} at ${i}`);
      names.push(m[0]);
      i += m[0].length;
      skipSpace();
      while (src[i] !== '"' && src[i] !== "'" && src[i] !== '`') i++; // = != =~ !~
      const quote = src[i];
      i++;
      while (src[i] !== quote) i += src[i] === '\\' ? 2 : 1;
      i++;
    }
  };
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) {
      i++;
    } else if (c === '"' || c === "'" || c === '`') {
      i++;
      while (i < src.length && src[i] !== c) i += src[i] === '\\' ? 2 : 1;
      i++;
    } else if (c === '[') {
      i = src.indexOf(']', i) + 1;
    } else if (c === '(') {
      frames.push(pendingGroup ?? []);
      pendingGroup = null;
      i++;
    } else if (c === ')') {
      frames.pop();
      i++;
    } else if (c === '{') {
      // A selector without a metric name: {__name__=...}; not used here.
      uses.push({ series: '', metric: '', labels: new Set(readMatchers()) });
    } else if (/[a-zA-Z_:]/.test(c)) {
      ident.lastIndex = i;
      const name = ident.exec(src)![0];
      i += name.length;
      skipSpace();
      if (LIST_KEYWORDS.has(name)) {
        if (src[i] === '(') {
          const list = readLabelList();
          if (name === 'by') pendingGroup = [...(pendingGroup ?? []), ...list];
        }
        continue;
      }
      if (KEYWORDS.has(name.toLowerCase())) continue;
      if (/^(by|without)\b/.test(src.slice(i))) continue; // an aggregation: `sum by (...) (...)`
      if (src[i] === '(') {
        // A function or an aggregation; `label_values(metric, label)` names a label too.
        labelValuesCall = name === 'label_values';
        continue;
      }
      if (name.includes(':')) continue; // a recording rule of ours, checked through its own expr
      const labels = new Set<string>(frames.flat());
      if (src[i] === '{') for (const l of readMatchers()) labels.add(l);
      if (labelValuesCall) {
        skipSpace();
        if (src[i] === ',') {
          i++;
          skipSpace();
          ident.lastIndex = i;
          const label = ident.exec(src)![0];
          labels.add(label);
          i += label.length;
        }
        labelValuesCall = false;
      }
      labels.delete('le');
      const hist = HISTOGRAM_SUFFIX.exec(name);
      if (hist && [...frames.flat()].includes('le')) labels.add('le');
      uses.push({ series: name, metric: name.replace(HISTOGRAM_SUFFIX, ''), labels });
    } else {
      i++;
    }
  }
  return uses.filter((u) => u.series !== '');
}

/**
 * Series that the exporters of the backing services and of the gateway produce (podmonitors.yaml),
 * not the apps: CloudNativePG (cnpg_), PgBouncer (cnpg_pgbouncer_), RabbitMQ (rabbitmq_), Redis
 * (redis_) and the gateway's access-log exporter (gateway_http_). Their names and labels are the
 * exporters' documented ones; checking them against live exporters is a release step
 * (docs/operations.md, "Monitoring"), since the systems the tests run have none of them.
 */
export const EXPORTER_SERIES = /^(cnpg_|rabbitmq_|redis_|gateway_http_)/;

/**
 * Every (series, labels) the rules and the dashboard need from the apps, merged per series name
 * (the exporters' series, EXPORTER_SERIES, are left out: see above).
 */
export function requiredSeries(): Map<string, { metric: string; labels: Set<string>; where: Set<string> }> {
  const need = new Map<string, { metric: string; labels: Set<string>; where: Set<string> }>();
  for (const { where, expr } of allExpressions()) {
    for (const u of metricUses(expr)) {
      if (EXPORTER_SERIES.test(u.series)) continue;
      const entry = need.get(u.series) ?? {
        metric: u.metric,
        labels: new Set<string>(),
        where: new Set<string>(),
      };
      for (const l of u.labels) entry.labels.add(l);
      entry.where.add(where);
      need.set(u.series, entry);
    }
  }
  return need;
}

/** The alerts the service must have (docs/operations/README.md has a runbook for each). */
export const REQUIRED_ALERTS = [
  'HttpErrorRatioHigh',
  'HttpLatencyP99High',
  'WebhookFailureRatioHigh',
  'WebhookRetryQueueGrowing',
  'WebhookDeliveriesGivenUp',
  'OutboxBacklogOld',
  'RpcTimeouts',
  'PostgresUnreachable',
  'RedisUnreachable',
  'RabbitmqUnreachable',
  'PartnerRateLimited',
  'NoTokenIssued',
  'AppDown',
  'TargetDown',
  // The backing services and the gateway, through their exporters.
  'GatewayErrorRatioHigh',
  'PostgresBackupTooOld',
  'PostgresWalArchivingFailing',
  'PostgresReplicationLag',
  'RedisMemoryHigh',
  'WebhookQueueDeep',
  'WebhookQueueMessageOld',
  'ParkedMessages',
  'ParkedMessageOld',
  'ExporterDown',
  // The SLOs of /v1/* (docs/operations.md): multi-window, multi-burn-rate.
  'SloAvailabilityBurnFast',
  'SloAvailabilityBurnSlow',
  'SloLatencyBurnFast',
  'SloLatencyBurnSlow',
] as const;

/** What the dashboard must show, each as a pattern its panel titles must match. */
export const REQUIRED_PANELS: Record<string, RegExp> = {
  traffic: /traffic/i,
  errors: /errors/i,
  'latency by route p50': /latency by route: p50/i,
  'latency by route p99': /latency by route: p99/i,
  'rate-limit refusals by partner tier': /rate-limit refusals by partner tier/i,
  'token-cache hit rate': /token-cache hit rate/i,
  'RPC latency by pattern': /rpc latency by pattern/i,
  'outbox backlog': /outbox backlog/i,
  'outbox age': /outbox oldest/i,
  'webhook success rate': /webhook success rate/i,
  'attempt latency': /webhook attempt latency/i,
  'retry-queue depth': /retry-queue depth/i,
  'deliveries given up': /deliveries given up/i,
  'seats by status change': /seats by status change/i,
  'availability SLO': /availability SLO/i,
  'latency SLO': /latency SLO/i,
  'SLO error budget': /error budget/i,
  'gateway answers': /gateway answers/i,
  'PostgreSQL backups and WAL': /postgresql: backup/i,
  'PostgreSQL replication lag': /postgresql: replication lag/i,
  'PgBouncer clients waiting': /pgbouncer/i,
  'RabbitMQ queue depth': /rabbitmq: queue depth/i,
  'RabbitMQ oldest message': /rabbitmq: oldest message/i,
  'Redis memory': /redis: memory/i,
};

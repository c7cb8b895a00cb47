/**
 * The production overlay carries the service's monitoring (k8s/components/monitoring): a
 * PodMonitor per app on the port named `metrics`, the PrometheusRule with every required alert,
 * and the Grafana dashboard as a ConfigMap the Grafana sidecar loads. The rules themselves are
 * tested with promtool by test/monitoring/rules.spec.ts.
 */
import { NEST_APPS } from '@svc/contracts';
import { REQUIRED_ALERTS, REQUIRED_PANELS, type Panel } from '../monitoring/monitoring';
import { NAMESPACES, allowedPorts, renderOverlays, selects } from './k8s-render';

const renders = renderOverlays();
const r = () => renders.production;

describe('k8s/overlays/production: monitoring', () => {
  it.each(NEST_APPS)('scrapes every pod of %s on its port named metrics, /metrics, every 30 s', (app) => {
    const monitor = r().get('PodMonitor', app);
    expect(monitor.metadata.namespace).toBe(NAMESPACES.production);
    const deployment = r().get('Deployment', app);
    // The PodMonitor selects the app's pods, and only them.
    expect(selects(monitor.spec.selector, deployment.spec.template.metadata.labels)).toBe(true);
    for (const other of NEST_APPS.filter((a) => a !== app))
      expect(selects(monitor.spec.selector, r().get('Deployment', other).spec.template.metadata.labels)).toBe(
        false,
      );
    expect(monitor.spec.podMetricsEndpoints).toEqual([
      expect.objectContaining({ port: 'metrics', path: '/metrics', interval: '30s', honorLabels: true }),
    ]);
    // `up` carries the same `app` label as the apps' own series.
    expect(monitor.spec.podMetricsEndpoints[0].relabelings).toContainEqual({
      sourceLabels: ['__meta_kubernetes_pod_label_app_kubernetes_io_name'],
      targetLabel: 'app',
    });
  });

  /**
   * The backing services and the gateway, each through its exporter: the pods it selects (labels
   * the operators set on their pods, or our own templates'), the port and the `app` it gets.
   */
  const EXPORTERS: { name: string; pods: () => Record<string, string>; port: string; portNumber: number }[] =
    [
      // CloudNativePG labels its instance pods cnpg.io/cluster and cnpg.io/podRole; port `metrics` 9187.
      {
        name: 'postgres',
        pods: () => ({ 'cnpg.io/cluster': 'postgres', 'cnpg.io/podRole': 'instance' }),
        port: 'metrics',
        portNumber: 9187,
      },
      // The Pooler's pods: cnpg.io/poolerName; PgBouncer's exporter on `metrics` 9127.
      {
        name: 'pgbouncer',
        pods: () => ({
          ...r().get('Pooler', 'postgres-pooler-rw').spec.template.metadata.labels,
          'cnpg.io/poolerName': 'postgres-pooler-rw',
        }),
        port: 'metrics',
        portNumber: 9127,
      },
      // The RabbitMQ operator's pods: app.kubernetes.io/name=<cluster>; rabbitmq_prometheus on `prometheus`.
      {
        name: 'rabbitmq',
        pods: () => ({ 'app.kubernetes.io/name': 'rabbitmq', 'app.kubernetes.io/component': 'rabbitmq' }),
        port: 'prometheus',
        portNumber: 15692,
      },
      {
        name: 'redis',
        pods: () => r().get('StatefulSet', 'redis').spec.template.metadata.labels,
        port: 'metrics',
        portNumber: 9121,
      },
      {
        name: 'gateway',
        pods: () => r().get('Deployment', 'gateway').spec.template.metadata.labels,
        port: 'metrics',
        portNumber: 4040,
      },
    ];

  it.each(EXPORTERS.map((e) => e.name))(
    'scrapes %s through its exporter, names it in `app`, and admits only that scrape from monitoring',
    (name) => {
      const exporter = EXPORTERS.find((e) => e.name === name)!;
      const monitor = r().get('PodMonitor', name);
      expect(selects(monitor.spec.selector, exporter.pods())).toBe(true);
      // Not the apps' pods, nor another service's.
      for (const app of NEST_APPS)
        expect(selects(monitor.spec.selector, r().get('Deployment', app).spec.template.metadata.labels)).toBe(
          false,
        );
      for (const other of EXPORTERS.filter((e) => e.name !== name))
        expect({ name, other: other.name, selects: selects(monitor.spec.selector, other.pods()) }).toEqual({
          name,
          other: other.name,
          selects: false,
        });
      for (const endpoint of monitor.spec.podMetricsEndpoints) {
        expect(endpoint).toEqual(expect.objectContaining({ port: exporter.port, interval: '30s' }));
        expect(endpoint.honorLabels).toBeUndefined();
        expect(endpoint.relabelings).toContainEqual({ targetLabel: 'app', replacement: name });
      }
      // Our own pods declare the port by that name.
      if (name === 'redis' || name === 'gateway') {
        const spec = (name === 'redis' ? r().get('StatefulSet', 'redis') : r().get('Deployment', 'gateway'))
          .spec.template.spec;
        const ports = spec.containers.flatMap(
          (c: { ports?: { name: string; containerPort: number }[] }) => c.ports ?? [],
        );
        expect(ports).toContainEqual({ name: exporter.port, containerPort: exporter.portNumber });
      }
      // (The gateway's 8080 is public to everyone, the monitoring namespace included.)
      expect([...allowedPorts(r(), exporter.pods(), { kind: 'namespace', name: 'monitoring' })]).toEqual(
        name === 'gateway' ? [8080, exporter.portNumber] : [exporter.portNumber],
      );
    },
  );

  it('reads the depth and the oldest message of every queue from RabbitMQ’s detailed metrics', () => {
    const endpoints = r().get('PodMonitor', 'rabbitmq').spec.podMetricsEndpoints;
    expect(endpoints).toContainEqual(
      expect.objectContaining({
        path: '/metrics/detailed',
        params: { family: expect.arrayContaining(['queue_coarse_metrics', 'queue_metrics']) },
      }),
    );
  });

  it('has no PodMonitor for anything else', () => {
    expect(
      r()
        .all('PodMonitor')
        .map((m) => m.metadata.name)
        .sort(),
    ).toEqual([...NEST_APPS, ...EXPORTERS.map((e) => e.name)].sort());
  });

  it('has every required alert in the PrometheusRule, each with a severity and a runbook_url', () => {
    const rule = r().get('PrometheusRule', 'crew-records');
    expect(rule.metadata.namespace).toBe(NAMESPACES.production);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const alerts = rule.spec.groups.flatMap((g: any) => g.rules).filter((x: any) => x.alert);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const byName = new Map<string, any>(alerts.map((a: any) => [a.alert, a]));
    for (const name of REQUIRED_ALERTS) {
      const a = byName.get(name);
      expect({ name, present: a !== undefined }).toEqual({ name, present: true });
      expect(['page', 'ticket']).toContain(a.labels.severity);
      expect(a.annotations.runbook_url).toMatch(/\/docs\/operations\/[a-z0-9-]+\.md$/);
    }
  });

  it('ships the Grafana dashboard as a ConfigMap the sidecar loads, every panel with a query', () => {
    const maps = r()
      .all('ConfigMap')
      .filter((c) => c.metadata.labels?.grafana_dashboard === '1');
    expect(maps.map((m) => m.metadata.name)).toEqual([expect.stringMatching(/^crew-records-dashboard-/)]);
    const files = Object.entries(maps[0].data ?? {});
    expect(files.map(([k]) => k)).toEqual(['crew-records-overview.json']);
    const dashboard = JSON.parse(files[0][1] as string) as {
      uid: string;
      panels: Panel[];
      templating: { list: { name: string; type: string }[] };
    };
    expect(dashboard.uid).toBe('crew-records-overview');
    expect(dashboard.templating.list).toContainEqual(expect.objectContaining({ name: 'app', type: 'query' }));
    expect(dashboard.panels.length).toBeGreaterThanOrEqual(Object.keys(REQUIRED_PANELS).length);
    for (const p of dashboard.panels) {
      const exprs = (p.targets ?? []).map((t) => t.expr).filter((e) => typeof e === 'string' && e.trim());
      expect({ panel: p.title, queries: exprs.length > 0 }).toEqual({ panel: p.title, queries: true });
    }
    expect(new Set(dashboard.panels.map((p) => p.id)).size).toBe(dashboard.panels.length);
    const titles = dashboard.panels.map((p) => p.title);
    const missing = Object.entries(REQUIRED_PANELS)
      .filter(([, re]) => !titles.some((t) => re.test(t)))
      .map(([what]) => what);
    expect(missing).toEqual([]);
  });
});

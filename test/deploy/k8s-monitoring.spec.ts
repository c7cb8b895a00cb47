/**
 * The production overlay carries the service's monitoring (k8s/components/monitoring): a
 * PodMonitor per app on the port named `metrics`, the PrometheusRule with every required alert,
 * and the Grafana dashboard as a ConfigMap the Grafana sidecar loads. The rules themselves are
 * tested with promtool by test/monitoring/rules.spec.ts.
 */
import { NEST_APPS } from '@svc/contracts';
import { REQUIRED_ALERTS, REQUIRED_PANELS, type Panel } from '../monitoring/monitoring';
import { NAMESPACES, renderOverlays, selects } from './k8s-render';

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

  it('has no PodMonitor for anything else', () => {
    expect(
      r()
        .all('PodMonitor')
        .map((m) => m.metadata.name)
        .sort(),
    ).toEqual([...NEST_APPS].sort());
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

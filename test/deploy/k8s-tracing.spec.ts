/**
 * Tracing in Kubernetes: every app tells its spans which pod and namespace they come from
 * (OTEL_RESOURCE_ATTRIBUTES from the downward API), tracing stays off in both overlays, and the
 * optional component k8s/components/otlp-egress turns it on and opens egress to the collector only.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { NEST_APPS } from '@svc/contracts';
import { parseResourceAttributes } from '../../libs/platform/src/config/config';
import {
  ENVS,
  ROOT,
  Render,
  appContainer,
  findRenderer,
  parseObjects,
  renderOverlays,
  schemaProblems,
  selects,
  type Container,
} from './k8s-render';

const renders = renderOverlays();
let withCollector: Render;
beforeAll(() => {
  // An overlay of our own: production plus the component, as an operator would write it.
  const dir = mkdtempSync(join(tmpdir(), 'crew-otlp-'));
  try {
    const rel = relative(dir, ROOT);
    writeFileSync(
      join(dir, 'kustomization.yaml'),
      [
        'apiVersion: kustomize.config.k8s.io/v1beta1',
        'kind: Kustomization',
        'resources:',
        `  - ${rel}/k8s/overlays/production`,
        'components:',
        `  - ${rel}/k8s/components/otlp-egress`,
        '',
      ].join('\n'),
    );
    withCollector = new Render('production+otlp-egress', parseObjects(findRenderer().render(dir)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

describe.each(ENVS)('k8s/overlays/%s: tracing', (env) => {
  const r = () => renders[env];

  it.each(NEST_APPS)('%s names its pod and namespace on its spans (OTEL_RESOURCE_ATTRIBUTES)', (app) => {
    const c = appContainer(r(), app);
    const value = String(r().envValue(c, 'OTEL_RESOURCE_ATTRIBUTES'));
    const fieldOf = (name: string) =>
      c.env.find((e: Container) => e.name === name)?.valueFrom?.fieldRef?.fieldPath as string | undefined;
    expect(fieldOf('POD_NAME')).toBe('metadata.name');
    expect(fieldOf('POD_NAMESPACE')).toBe('metadata.namespace');
    // $(VAR) is expanded by the kubelet only for variables defined before it.
    const names = c.env.map((e: Container) => e.name);
    expect(names.indexOf('POD_NAME')).toBeLessThan(names.indexOf('OTEL_RESOURCE_ATTRIBUTES'));
    const expanded = value.replace('$(POD_NAME)', `${app}-7d9f-x2`).replace('$(POD_NAMESPACE)', 'ns');
    expect(parseResourceAttributes(expanded)).toEqual({
      'k8s.pod.name': `${app}-7d9f-x2`,
      'k8s.namespace.name': 'ns',
    });
  });

  it('keeps tracing off, and no egress to a collector, unless the otlp-egress component is added', () => {
    for (const app of NEST_APPS)
      expect(r().envValue(appContainer(r(), app), 'OTEL_EXPORTER_OTLP_ENDPOINT')).toBeUndefined();
    expect(r().find('NetworkPolicy', 'apps-egress-to-otlp-collector')).toBeUndefined();
  });
});

describe('k8s/components/otlp-egress', () => {
  it('renders valid objects on top of an overlay', () => {
    expect(schemaProblems(withCollector.objects)).toEqual([]);
  });

  it('turns tracing on in every app, sampling new traces at 1% and following a caller’s decision', () => {
    for (const app of NEST_APPS) {
      const c = appContainer(withCollector, app);
      expect(withCollector.envValue(c, 'OTEL_EXPORTER_OTLP_ENDPOINT')).toMatch(/^http:\/\/[a-z0-9.-]+:4318$/);
      expect(withCollector.envValue(c, 'OTEL_TRACES_SAMPLER')).toBe('parentbased_traceidratio');
      expect(withCollector.envValue(c, 'OTEL_TRACES_SAMPLER_ARG')).toBe('0.01');
    }
  });

  it('lets the apps, and only them, reach the collector’s pods on OTLP/HTTP 4318', () => {
    const policy = withCollector.get('NetworkPolicy', 'apps-egress-to-otlp-collector');
    expect(policy.spec.policyTypes).toEqual(['Egress']);
    for (const app of NEST_APPS)
      expect(
        selects(policy.spec.podSelector, withCollector.get('Deployment', app).spec.template.metadata.labels),
      ).toBe(true);
    for (const other of ['gateway'])
      expect(
        selects(
          policy.spec.podSelector,
          withCollector.get('Deployment', other).spec.template.metadata.labels,
        ),
      ).toBe(false);
    expect(
      selects(policy.spec.podSelector, withCollector.get('Job', 'migrations').spec.template.metadata.labels),
    ).toBe(false);
    // One peer: the collector's pods in its namespace (both selectors in one entry), on 4318 only.
    expect(policy.spec.egress).toEqual([
      {
        to: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': expect.any(String) } },
            podSelector: { matchLabels: { 'app.kubernetes.io/name': expect.any(String) } },
          },
        ],
        ports: [{ protocol: 'TCP', port: 4318 }],
      },
    ]);
  });
});

/** The gateway: its upstreams, the public HTTPRoute and the proxies it trusts. */
import {
  type Container,
  ENVS,
  NON_PUBLIC_RANGES,
  UPSTREAM_APPS,
  appContainer,
  inCidr,
  renderOverlays,
} from './k8s-render';

const renders = renderOverlays();

describe.each(ENVS)('k8s/overlays/%s', (env) => {
  const r = () => renders[env];

  it('points the gateway at every upstream Service and routes the public host to it with a Gateway API HTTPRoute', () => {
    const gateway = appContainer(r(), 'gateway');
    expect(r().envValue(gateway, 'GATEWAY_PORT')).toBe('8080');
    for (const app of UPSTREAM_APPS) {
      const variable = `${app.toUpperCase().replace(/-/g, '_')}_UPSTREAMS`;
      const upstreams = String(r().envValue(gateway, variable) ?? '').split(',');
      expect(upstreams.length).toBeGreaterThan(0);
      for (const upstream of upstreams) {
        const [host, port] = upstream.split(':');
        expect(host).toBe(app);
        expect(
          r()
            .get('Service', host)
            .spec.ports.map((p: Container) => p.port),
        ).toContain(Number(port));
      }
    }
    expect(r().envValue(gateway, 'DOCS_URL')).toMatch(/^https:\/\//);

    const routes = r().all('HTTPRoute');
    expect(routes).toHaveLength(1);
    const [route] = routes;
    expect(route.apiVersion).toBe('gateway.networking.k8s.io/v1');
    expect(route.spec.hostnames).toHaveLength(1);
    const backends = route.spec.rules.flatMap((rule: Container) => rule.backendRefs ?? []);
    expect(backends).toEqual([{ name: 'gateway', port: 8080 }]);
    // The apps tell partners the same public address that the route serves.
    expect(r().envValue(appContainer(r(), 'crew-api'), 'PUBLIC_BASE_URL')).toBe(
      `https://${route.spec.hostnames[0]}`,
    );
  });

  it('trusts X-Forwarded-For from no pod: none in sandbox, only the load balancer ranges in production', () => {
    const value = String(r().envValue(appContainer(r(), 'gateway'), 'GATEWAY_TRUSTED_PROXIES') ?? '');
    const cidrs = value === '' ? [] : value.split(',');
    if (env === 'sandbox') expect(cidrs).toEqual([]);
    else expect(cidrs.length).toBeGreaterThan(0);
    for (const cidr of cidrs) {
      expect(cidr).toMatch(/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/);
      // A pod (or anything in the cluster's private ranges) that could forge the address the
      // per-address limits key on is never trusted: not the pod CIDR, not a private range.
      const [base] = cidr.split('/');
      expect({ cidr, private: NON_PUBLIC_RANGES.some((range) => inCidr(base, range)) }).toEqual({
        cidr,
        private: false,
      });
    }
  });

  it('exports the gateway’s own answers as metrics: nginx → syslog → the exporter beside it', () => {
    const gateway = r().get('Deployment', 'gateway').spec.template.spec;
    const server = String(r().envValue(appContainer(r(), 'gateway'), 'GATEWAY_METRICS_SYSLOG'));
    const exporter = gateway.containers.find((c: Container) => c.name === 'metrics-exporter');
    expect(exporter.ports).toEqual([{ name: 'metrics', containerPort: 4040 }]);
    const configMap = gateway.volumes.find((v: Container) => v.name === 'metrics-config').configMap.name;
    const hcl = String(r().configMap(configMap)?.data?.['gateway-metrics.hcl']);
    // The exporter listens (in the pod only) where nginx sends, and parses what nginx writes.
    expect(server).toBe('127.0.0.1:5531');
    expect(hcl).toContain(`listen_address = "udp://${server}"`);
    expect(hcl).toContain('format = "\\"$request\\" $status $request_time"');
    expect(hcl).toMatch(/metrics_override = \{ prefix = "gateway" \}/);
    expect(hcl).toMatch(/port = 4040/);
  });
});

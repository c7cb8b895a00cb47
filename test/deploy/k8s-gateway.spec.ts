/** The gateway: its upstreams, the public HTTPRoute and the proxies it trusts. */
import { type Container, ENVS, UPSTREAM_APPS, appContainer, renderOverlays } from './k8s-render';

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

  it('tells nginx which proxies may set X-Forwarded-For (GATEWAY_TRUSTED_PROXIES, CIDRs)', () => {
    const value = String(r().envValue(appContainer(r(), 'gateway'), 'GATEWAY_TRUSTED_PROXIES') ?? '');
    const cidrs = value.split(',');
    expect(cidrs.length).toBeGreaterThan(0);
    for (const cidr of cidrs) expect(cidr).toMatch(/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/);
    // Production adds the load balancer ranges to the cluster's pod CIDR.
    if (env === 'production') expect(cidrs.length).toBeGreaterThan(1);
  });
});

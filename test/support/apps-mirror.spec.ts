import { DEFAULT_METRICS_PORTS, DEFAULT_PORTS, GATEWAY_ROUTES, NEST_APPS } from '@svc/contracts';
import * as scripts from '../../scripts/lib/apps.cjs';

/** The scripts run before anything is compiled, so they keep a copy of the app list: it must match. */
describe('scripts/lib/apps.cjs mirrors libs/contracts', () => {
  it('lists the same apps', () => {
    expect([...scripts.NEST_APPS].sort()).toEqual([...NEST_APPS].sort());
  });

  it('uses the same default ports', () => {
    expect(scripts.DEFAULT_PORTS).toEqual(DEFAULT_PORTS);
    expect(scripts.DEFAULT_METRICS_PORTS).toEqual(DEFAULT_METRICS_PORTS);
  });

  it('gives the gateway generator an upstream variable for every app the route table reaches', () => {
    const routed = [...new Set(GATEWAY_ROUTES.map((r) => r.app))].sort();
    expect(Object.keys(scripts.GATEWAY_UPSTREAM_VARS).sort()).toEqual(routed);
    for (const [app, variable] of Object.entries(scripts.GATEWAY_UPSTREAM_VARS)) {
      expect(variable).toBe(`${app.toUpperCase().replace(/-/g, '_')}_UPSTREAMS`);
    }
  });
});

import { findGatewayRoute, GATEWAY_OWN_PATHS, GATEWAY_ROUTES, PROBE_PATHS } from '@svc/contracts';
import { APP_DEFINITIONS as definitions, servedRoutes } from '../support/app-routes';

/**
 * The gateway's route table is the one source of truth: every route an app serves publicly must
 * be reachable through an entry of the table that points at that very app.
 */
describe('gateway route table', () => {
  it.each(definitions.map((d) => [d.name, d] as const))(
    'covers every public route %s serves',
    async (name, definition) => {
      const routes = await servedRoutes(definition);
      expect(routes.map((r) => r.url)).toEqual(expect.arrayContaining([...PROBE_PATHS]));
      // Metrics are served on the metrics port, never on the API port the gateway proxies.
      expect(routes.map((r) => r.url)).not.toContain('/metrics');
      const uncovered = routes
        .filter((r) => !(PROBE_PATHS as readonly string[]).includes(r.url))
        .filter((r) => findGatewayRoute(r.url.replace(/:[^/]+/g, 'x'))?.app !== name)
        .map((r) => `${r.method} ${r.url}`);
      expect(uncovered).toEqual([]);
    },
  );

  it('sends no path to two places and shadows none of the gateway’s own paths', () => {
    const keys = GATEWAY_ROUTES.map((r) => `${r.match}:${r.path}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const own of GATEWAY_OWN_PATHS) expect(findGatewayRoute(own)).toBeUndefined();
  });
});

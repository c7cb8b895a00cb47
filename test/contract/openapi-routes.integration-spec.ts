import {
  buildOpenApiDocument,
  findGatewayRoute,
  GATEWAY_OWN_PATHS,
  PROBE_PATHS,
  ROUTES_OUTSIDE_API_DESCRIPTION,
} from '@svc/contracts';
import { APP_DEFINITIONS as definitions, servedRoutes } from '../support/app-routes';

/** `GET /v1/partners/sponsorships/{}`: parameter names do not matter, their places do. */
const key = (method: string, path: string) =>
  `${method.toUpperCase()} ${path.replace(/\{[^}]+\}|:[^/]+/g, '{}')}`;

/** Public operations as `METHOD /path/{}`: the apps' routes the production gateway routes, and its own paths. */
async function servedOperations(): Promise<Set<string>> {
  const served = new Set<string>();
  for (const definition of definitions) {
    const routes = await servedRoutes(definition);
    const gets = new Set(routes.filter((r) => r.method === 'GET').map((r) => r.url));
    for (const { method, url } of routes) {
      if ((PROBE_PATHS as readonly string[]).includes(url)) continue;
      // Fastify answers HEAD for every GET route; the description's GET covers it (RFC 9110 §9.3.2).
      if (method === 'HEAD' && gets.has(url)) continue;
      const route = findGatewayRoute(url.replace(/:[^/]+/g, 'x'));
      if (!route || route.app !== definition.name || route.sandboxOnly) continue;
      served.add(key(method, url));
    }
  }
  for (const path of GATEWAY_OWN_PATHS) served.add(key('GET', path));
  return served;
}

function documentedOperations(): Set<string> {
  const document = buildOpenApiDocument({
    publicBaseUrl: 'https://api.test',
    docsUrl: 'https://api.test/docs',
  });
  const documented = new Set<string>();
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, unknown>>)) {
    for (const method of Object.keys(item)) documented.add(key(method, path));
  }
  return documented;
}

/**
 * Route drift: the OpenAPI description and the apps must list the same public operations. Every
 * route an app serves through the gateway (in production: sandbox-only routes are not public) is in
 * the description or in its short list of deliberate exceptions, and every operation the
 * description lists is served by an app or by the gateway itself.
 */
describe('route drift between the apps and the OpenAPI description', () => {
  let served: Set<string>;
  const documented = documentedOperations();
  const exceptions = new Set(ROUTES_OUTSIDE_API_DESCRIPTION.map((r) => key(r.method, r.path)));

  beforeAll(async () => {
    served = await servedOperations();
  }, 60_000);

  it('documents every public route an app or the gateway serves', () => {
    const undocumented = [...served].filter((op) => !documented.has(op) && !exceptions.has(op)).sort();
    expect(undocumented).toEqual([]);
  });

  it('lists no operation that nothing serves', () => {
    const unserved = [...documented].filter((op) => !served.has(op)).sort();
    expect(unserved).toEqual([]);
  });

  it('keeps no stale exception: each route left out of the description on purpose is served', () => {
    expect([...exceptions].filter((op) => !served.has(op)).sort()).toEqual([]);
    expect([...exceptions].filter((op) => documented.has(op)).sort()).toEqual([]);
  });

  it('covers every row of the interface’s endpoint table and the seat provision and removal', () => {
    const table = [
      'GET /oauth/authorize',
      'POST /oauth/authorize',
      'POST /oauth/token',
      'POST /oauth/revoke',
      'GET /oauth/userinfo',
      'GET /v1/me',
      'GET /v1/me/sea-time',
      'GET /v1/me/sea-time/recent',
      'GET /v1/me/vessels',
      'GET /v1/webhooks/test',
      'GET /v1/partners/sponsorships',
      'GET /v1/partners/sponsorships/{}',
      'POST /v1/partners/sponsorships/reconcile',
      'POST /v1/partners/members/left',
      'POST /v1/partners/sponsorships',
      'DELETE /v1/partners/sponsorships/{}',
      'GET /healthz',
      'GET /openapi.json',
      'GET /openapi.yaml',
    ];
    expect(table.filter((op) => !documented.has(op))).toEqual([]);
  });
});

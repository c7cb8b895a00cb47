import type { NestAppName } from './apps';

/**
 * The gateway's route table: the one source of truth for which public path reaches which app.
 * The nginx configuration is generated from it, and a test fails when an app serves a public
 * route that no entry here covers.
 *
 * `exact` entries match one path; `prefix` entries match the path and everything below it.
 */
export interface GatewayRoute {
  readonly path: string;
  readonly match: 'exact' | 'prefix';
  readonly app: NestAppName;
  /** Routed through the gateway only when APP_ENV=sandbox; in production it stays inside the cluster. */
  readonly sandboxOnly?: boolean;
  /** Request body ceiling in bytes; the default is DEFAULT_BODY_LIMIT_BYTES. */
  readonly bodyLimitBytes?: number;
}

export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;
export const RECONCILE_BODY_LIMIT_BYTES = 5 * 1024 * 1024;

export const GATEWAY_ROUTES: readonly GatewayRoute[] = [
  // OAuth 2.0 authorization server (RFC 6749) — token, revocation (RFC 7009), userinfo.
  { path: '/oauth/token', match: 'exact', app: 'auth-server' },
  { path: '/oauth/revoke', match: 'exact', app: 'auth-server' },
  { path: '/oauth/userinfo', match: 'exact', app: 'auth-server' },
  // Authorization server metadata (RFC 8414).
  { path: '/.well-known/oauth-authorization-server', match: 'exact', app: 'auth-server' },
  // What a crew member sees in the browser.
  { path: '/oauth/authorize', match: 'exact', app: 'consent-ui' },
  { path: '/login', match: 'exact', app: 'consent-ui' },
  { path: '/logout', match: 'exact', app: 'consent-ui' },
  { path: '/account', match: 'prefix', app: 'consent-ui' },
  // The partner portal's pages (a partner's staff, opened with a single-use link).
  { path: '/portal', match: 'prefix', app: 'consent-ui' },
  // Crew-data API.
  { path: '/v1/me', match: 'prefix', app: 'crew-api' },
  { path: '/v1/webhooks/test', match: 'exact', app: 'crew-api' },
  { path: '/internal/v1', match: 'prefix', app: 'crew-api', sandboxOnly: true },
  // Sponsorship API.
  {
    path: '/v1/partners/sponsorships/reconcile',
    match: 'exact',
    app: 'sponsorship-api',
    bodyLimitBytes: RECONCILE_BODY_LIMIT_BYTES,
  },
  { path: '/v1/partners', match: 'prefix', app: 'sponsorship-api' },
  // Portal links are minted where partner credentials and redirect URIs live.
  { path: '/v1/partners/portal/sessions', match: 'exact', app: 'auth-server' },
  // Partners' own webhooks: the delivery log lives in the dispatcher's database, so it serves them.
  { path: '/v1/partners/webhooks', match: 'prefix', app: 'webhook-dispatcher' },
];

/** Paths the gateway answers itself, without an upstream. */
export const GATEWAY_OWN_PATHS = ['/healthz', '/openapi.json', '/openapi.yaml', '/docs'] as const;

/**
 * Paths every app serves on its own port for the orchestrator; never routed through the gateway.
 * (Prometheus scrapes `/metrics` on a separate port, METRICS_PORT, that the gateway never proxies.)
 */
export const PROBE_PATHS = ['/healthz', '/readyz'] as const;

/** The route table entry that covers `path`, preferring exact matches, then the longest prefix. */
export function findGatewayRoute(path: string, routes: readonly GatewayRoute[] = GATEWAY_ROUTES) {
  const exact = routes.find((r) => r.match === 'exact' && r.path === path);
  if (exact) return exact;
  return routes
    .filter((r) => r.match === 'prefix' && (path === r.path || path.startsWith(`${r.path}/`)))
    .sort((a, b) => b.path.length - a.path.length)[0];
}

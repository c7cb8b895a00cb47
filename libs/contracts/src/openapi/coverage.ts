/**
 * Routes served through the gateway that the API description leaves out on purpose: the crew
 * member's own browser pages around the consent screen, and the documentation site. Partners
 * never call them. The route-drift test fails when an app serves a public route that is neither
 * in the description nor here, and when an entry here is served by nobody.
 */
export interface UndescribedRoute {
  readonly method: string;
  /** OpenAPI path syntax (`{param}`). */
  readonly path: string;
  readonly reason: string;
}

const BROWSER = 'a page of the crew member’s browser session (consent UI), not an API operation';

const PORTAL =
  'a page of the partner portal (a partner’s staff in a browser, opened with a link from POST /v1/partners/portal/sessions)';

export const ROUTES_OUTSIDE_API_DESCRIPTION: readonly UndescribedRoute[] = [
  { method: 'GET', path: '/login', reason: BROWSER },
  { method: 'POST', path: '/login', reason: BROWSER },
  { method: 'GET', path: '/logout', reason: BROWSER },
  { method: 'POST', path: '/logout', reason: BROWSER },
  { method: 'GET', path: '/account/connections', reason: BROWSER },
  { method: 'POST', path: '/account/connections/{clientId}/disconnect', reason: BROWSER },
  {
    method: 'GET',
    path: '/account/export',
    reason: 'the crew member’s own data export (a download in their browser session)',
  },
  { method: 'GET', path: '/portal', reason: PORTAL },
  { method: 'GET', path: '/portal/open', reason: PORTAL },
  { method: 'POST', path: '/portal/open', reason: PORTAL },
  { method: 'GET', path: '/portal/deliveries', reason: PORTAL },
  { method: 'GET', path: '/portal/deliveries/{deliveryId}', reason: PORTAL },
  { method: 'POST', path: '/portal/deliveries/{deliveryId}/redeliver', reason: PORTAL },
  { method: 'POST', path: '/portal/replay', reason: PORTAL },
  { method: 'POST', path: '/portal/endpoint/enable', reason: PORTAL },
  { method: 'POST', path: '/portal/endpoint/test', reason: PORTAL },
  { method: 'POST', path: '/portal/signing-keys/rotate', reason: PORTAL },
  { method: 'GET', path: '/portal/seats', reason: PORTAL },
  { method: 'POST', path: '/portal/sign-out', reason: PORTAL },
  { method: 'GET', path: '/account/assets/consent.css', reason: 'the consent pages’ stylesheet' },
  { method: 'GET', path: '/docs', reason: 'the documentation site rendered from this description' },
];

import { cookieName, type CookiePolicy } from '../sessions/session-cookies';
import type { SessionKind } from '../sessions/session-store';

/** The portal's own cookie, never the crew member's session: another name, another path. */
export const PORTAL_COOKIE = 'svc_portal';
export const PORTAL_PATH = '/portal';
/** Issue 41: a portal session lasts at most an hour. */
export const PORTAL_SESSION_TTL_SECONDS = 60 * 60;

/** What a portal session holds: the partner it was opened for, as auth-server said at the link. */
export interface PortalSessionData {
  /** A public reference (`pps_…`) that the actions it makes are recorded with. */
  readonly ref: string;
  readonly clientId: string;
  readonly partnerName: string;
  readonly sponsorship: boolean;
  /** Origins that may frame the portal (the framing origins registered for the partner). */
  readonly frameOrigins: readonly string[];
}

/**
 * Portal sessions: an hour at most, no idle lifetime. The cookie is HttpOnly, scoped to `/portal`.
 * Where cookies are Secure it is `SameSite=None; Partitioned`: the portal may be framed on the
 * partner's own site, where a Lax cookie is never sent; its forms carry CSRF tokens, so a
 * cross-site POST gains nothing. Over plain HTTP (local development) Lax: browsers refuse None
 * without Secure, and a partner's page on localhost is same-site anyway.
 */
export function portalSessionKind(policy: CookiePolicy): SessionKind<PortalSessionData> {
  return {
    table: 'portal_sessions',
    columns: {
      ref: 'ref',
      clientId: 'client_id',
      partnerName: 'partner_name',
      sponsorship: 'sponsorship',
      frameOrigins: 'frame_origins',
    },
    cookie: {
      // Production's name (the rule of the crew session's `__Host-` one): a browser accepts it only
      // Secure from an https page, so a plain-HTTP page cannot plant one. Not `__Host-`, which needs
      // `Path=/`: the portal's cookie stays on `/portal`.
      name: cookieName(policy, PORTAL_COOKIE, '__Secure-'),
      path: PORTAL_PATH,
      secure: policy.secure,
      sameSite: policy.secure ? 'None' : 'Lax',
      partitioned: policy.secure,
    },
    lifetimeSeconds: PORTAL_SESSION_TTL_SECONDS,
  };
}

import { AUTH_PORTAL_LINK_REDEEM } from './portal-links';

/**
 * `auth.portal.peek`: whose portal a link opens, without spending it. consent-ui asks when the
 * link is visited (a GET, which a chat preview or a mail scanner makes as well as a person): the
 * page it shows names the partner and frames like its portal, and only the page's POST redeems
 * the link (`auth.portal.redeem`). The request and the answer are redeem's, declared once there.
 */
export const AUTH_PORTAL_LINK_PEEK: typeof AUTH_PORTAL_LINK_REDEEM = {
  ...AUTH_PORTAL_LINK_REDEEM,
  pattern: 'auth.portal.peek',
};

import {
  fieldsContract,
  partnerCheck,
  readBoolean,
  readString,
  sha256Hex,
  text,
  type PartnerCheck,
  type Read,
} from '../../validate';
import { frameOrigins } from '../../frame-origin';
import { RPC_QUEUES } from '../rpc';
import { API_LIMITS } from '../../limits';

/**
 * `auth.portal.redeem`: consent-ui opens a partner portal link. auth-server spends the link (once,
 * within its 5 minutes) and says whose portal it opens. Only the SHA-256 of the link's token
 * travels (auth-server stores nothing else).
 */
const REQUEST = { token_digest: sha256Hex };
export type PortalLinkRedeemRequest = Read<typeof REQUEST>;

const PARTNER = {
  client_id: readString,
  name: readString,
  /** In the sponsorship program: the portal shows its seats. */
  sponsorship: readBoolean,
  /**
   * The framing origins registered for the partner (`partners set-frame-origins`), each checked as
   * a CSP host source: the only pages that may frame its portal (`Content-Security-Policy:
   * frame-ancestors`). Empty: none may (`frame-ancestors 'none'`).
   */
  frame_origins: frameOrigins,
};
export type PortalPartner = Read<typeof PARTNER>;
export type PortalLinkRedeemResponse = PartnerCheck<PortalPartner>;

export const AUTH_PORTAL_LINK_REDEEM = fieldsContract(
  RPC_QUEUES.authServer,
  'auth.portal.redeem',
  ['consent-ui'],
  REQUEST,
  partnerCheck(PARTNER),
);

/**
 * `auth.portal.peek`: whose portal a link opens, without spending it. consent-ui asks when the
 * link is visited (a GET, which a chat preview or a mail scanner makes as well as a person): the
 * page it shows names the partner and frames like its portal, and only the page's POST redeems
 * the link. Redeem's request and answer, under its own pattern.
 */
export const AUTH_PORTAL_LINK_PEEK = fieldsContract(
  RPC_QUEUES.authServer,
  'auth.portal.peek',
  ['consent-ui'],
  REQUEST,
  partnerCheck(PARTNER),
);

/**
 * `auth.portal.standing`: may this partner's open portal session go on? consent-ui asks on every
 * portal page, so a partner suspended (or removed) while its session is open loses it at its next
 * page, not when the hour is up.
 */
export const AUTH_PORTAL_STANDING = fieldsContract(
  RPC_QUEUES.authServer,
  'auth.portal.standing',
  ['consent-ui'],
  { client_id: text(API_LIMITS.idMaxLength) },
  { active: readBoolean },
);

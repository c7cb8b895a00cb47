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
import { API_LIMITS } from '../../limits';
import type { RpcPattern } from '../rpc';

const REQUEST = { token_digest: sha256Hex };

const PARTNER = {
  client_id: readString,
  name: readString,
  /** In the sponsorship program: the portal shows its seats. */
  sponsorship: readBoolean,
  /** The only pages that may frame the partner's portal (CSP `frame-ancestors`); empty: none. */
  frame_origins: frameOrigins,
};
export type PortalPartner = Read<typeof PARTNER>;
export type PortalLinkRedeemResponse = PartnerCheck<PortalPartner>;

const portalLink = (pattern: RpcPattern) =>
  fieldsContract(pattern, ['consent-ui'], REQUEST, partnerCheck(PARTNER));

/** `auth.portal.redeem`: spends a portal link (once, within 5 minutes); only its token's SHA-256 travels. */
export const AUTH_PORTAL_LINK_REDEEM = portalLink('auth.portal.redeem');
/** `auth.portal.peek`: redeem's question without spending the link (a GET comes from link previews too). */
export const AUTH_PORTAL_LINK_PEEK = portalLink('auth.portal.peek');

/** `auth.portal.standing`: asked on every portal page, so a suspended partner loses its session at once. */
export const AUTH_PORTAL_STANDING = fieldsContract(
  'auth.portal.standing',
  ['consent-ui'],
  { client_id: text(API_LIMITS.idMaxLength) },
  { active: readBoolean },
);

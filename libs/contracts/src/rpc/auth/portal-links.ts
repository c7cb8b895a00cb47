import {
  fieldsContract,
  partnerCheck,
  readBoolean,
  readString,
  readStringArray,
  sha256Hex,
  type PartnerCheck,
  type Read,
} from '../../validate';
import { RPC_QUEUES } from '../rpc';

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
   * The origins of the partner's registered redirect URIs: the only pages that may frame its
   * portal (`Content-Security-Policy: frame-ancestors`).
   */
  frame_origins: readStringArray,
};
export type PortalPartner = Read<typeof PARTNER>;
export type PortalLinkRedeemResponse = PartnerCheck<PortalPartner>;

export const AUTH_PORTAL_LINK_REDEEM = fieldsContract(
  RPC_QUEUES.authServer,
  'auth.portal.redeem',
  REQUEST,
  partnerCheck(PARTNER),
);

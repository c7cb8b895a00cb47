import {
  readBoolean,
  readFields,
  readRecord,
  readString,
  readStringArray,
  sha256Hex,
  type Read,
} from '../../validate';
import { RPC_QUEUES, type RpcContract } from '../rpc';

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

export type PortalLinkRedeemResponse =
  { readonly valid: false } | { readonly valid: true; readonly partner: PortalPartner };

const NAME = 'auth.portal.redeem';

export const AUTH_PORTAL_LINK_REDEEM: RpcContract<PortalLinkRedeemRequest, PortalLinkRedeemResponse> = {
  pattern: NAME,
  queue: RPC_QUEUES.authServer,
  parseRequest: (input) => readFields(NAME, input, REQUEST),
  parseResponse(input) {
    const r = readRecord(NAME, input);
    if (!readBoolean(NAME, r, 'valid')) return { valid: false };
    return { valid: true, partner: readFields(NAME, r.partner, PARTNER) };
  },
};

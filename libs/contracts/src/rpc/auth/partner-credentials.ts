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
import { API_LIMITS } from '../../limits';

/** `auth.partners.verify`: the Basic guard's check of a partner's credentials; only the secret's SHA-256 travels. */
const REQUEST = {
  client_id: text(API_LIMITS.idMaxLength),
  /** SHA-256 of the client secret, lower-case hex. */
  secret_digest: sha256Hex,
};
export type PartnerVerifyRequest = Read<typeof REQUEST>;

const PARTNER = {
  client_id: readString,
  name: readString,
  /** In the sponsorship program: may use `/v1/partners/*`. */
  sponsorship: readBoolean,
  /** Allowed to call `POST /v1/partners/members/left`. */
  member_left: readBoolean,
  suspended: readBoolean,
};
export type VerifiedPartner = Read<typeof PARTNER>;
export type PartnerVerifyResponse = PartnerCheck<VerifiedPartner>;

export const AUTH_PARTNER_VERIFY = fieldsContract(
  'auth.partners.verify',
  ['sponsorship-api', 'webhook-dispatcher'],
  REQUEST,
  partnerCheck(PARTNER),
);

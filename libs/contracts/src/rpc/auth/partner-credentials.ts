import { readBoolean, readFields, readRecord, readString, sha256Hex, text } from '../../validate';
import { RPC_QUEUES, type RpcContract } from '../rpc';
import { API_LIMITS } from '../../limits';

/**
 * `auth.partners.verify`: are these the partner's client credentials, and what may the partner
 * do? Asked by the Basic guard of the partner endpoints (`/v1/partners/*`). Only the SHA-256 of
 * the secret travels (auth-server stores nothing else).
 */
export interface PartnerVerifyRequest {
  readonly client_id: string;
  /** SHA-256 of the client secret, lower-case hex. */
  readonly secret_digest: string;
}

export interface VerifiedPartner {
  readonly client_id: string;
  readonly name: string;
  /** In the sponsorship program: may use `/v1/partners/*`. */
  readonly sponsorship: boolean;
  /** Allowed to call `POST /v1/partners/members/left`. */
  readonly member_left: boolean;
  readonly suspended: boolean;
}

export type PartnerVerifyResponse =
  { readonly valid: false } | { readonly valid: true; readonly partner: VerifiedPartner };

const NAME = 'auth.partners.verify';

export const AUTH_PARTNER_VERIFY: RpcContract<PartnerVerifyRequest, PartnerVerifyResponse> = {
  pattern: NAME,
  queue: RPC_QUEUES.authServer,
  parseRequest: (input) =>
    readFields(NAME, input, { client_id: text(API_LIMITS.idMaxLength), secret_digest: sha256Hex }),
  parseResponse(input) {
    const r = readRecord(NAME, input);
    if (!readBoolean(NAME, r, 'valid')) return { valid: false };
    const partner = readFields(NAME, r.partner, {
      client_id: readString,
      name: readString,
      sponsorship: readBoolean,
      member_left: readBoolean,
      suspended: readBoolean,
    });
    return { valid: true, partner };
  },
};

import { readBoolean, readRecord, readString } from '../../validate';
import { ContractViolation, RPC_QUEUES, type RpcContract } from '../rpc';
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
  parseRequest(input) {
    const r = readRecord(NAME, input);
    const client_id = readString(NAME, r, 'client_id', API_LIMITS.idMaxLength);
    const secret_digest = readString(NAME, r, 'secret_digest', 64);
    if (!/^[0-9a-f]{64}$/.test(secret_digest))
      throw new ContractViolation(NAME, '`secret_digest` must be 64 hex characters');
    return { client_id, secret_digest };
  },
  parseResponse(input) {
    const r = readRecord(NAME, input);
    if (!readBoolean(NAME, r, 'valid')) return { valid: false };
    const p = readRecord(NAME, r.partner);
    return {
      valid: true,
      partner: {
        client_id: readString(NAME, p, 'client_id'),
        name: readString(NAME, p, 'name'),
        sponsorship: readBoolean(NAME, p, 'sponsorship'),
        member_left: readBoolean(NAME, p, 'member_left'),
        suspended: readBoolean(NAME, p, 'suspended'),
      },
    };
  },
};

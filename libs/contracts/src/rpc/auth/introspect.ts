import type { CachedIntrospection } from '../../introspection';
import { readBoolean, readRecord, readString, readStringArray } from '../../validate';
import { ContractViolation, RPC_QUEUES, type RpcContract } from '../rpc';

/** `auth.introspect`: is this access token live, and for whom? Only the digest travels. */
export interface IntrospectRequest {
  /** SHA-256 of the access token, lower-case hex. */
  readonly token_digest: string;
}
export type IntrospectResponse = CachedIntrospection;

const NAME = 'auth.introspect';

export const AUTH_INTROSPECT: RpcContract<IntrospectRequest, IntrospectResponse> = {
  pattern: NAME,
  queue: RPC_QUEUES.authServer,
  parseRequest(input) {
    const r = readRecord(NAME, input);
    const digest = readString(NAME, r, 'token_digest', 64);
    if (!/^[0-9a-f]{64}$/.test(digest))
      throw new ContractViolation(NAME, '`token_digest` must be 64 hex characters');
    return { token_digest: digest };
  },
  parseResponse(input) {
    const r = readRecord(NAME, input);
    if (!readBoolean(NAME, r, 'active')) return { active: false };
    return {
      active: true,
      user_id: readString(NAME, r, 'user_id'),
      client_id: readString(NAME, r, 'client_id'),
      scopes: readStringArray(NAME, r, 'scopes'),
      expires_at: readString(NAME, r, 'expires_at'),
    };
  },
};

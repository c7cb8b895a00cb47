import { readBoolean, readRecord, readString, readStringArray } from '../../validate';
import { ContractViolation, RPC_QUEUES, type RpcContract } from '../rpc';

/** `auth.consents.list` / `auth.consents.revoke`: the crew member's connected-partners page. */
export interface Connection {
  readonly client_id: string;
  readonly client_name: string;
  readonly scopes: readonly string[];
  /** ISO 8601 UTC: when the member first connected this partner. */
  readonly connected_at: string;
}

const LIST = 'auth.consents.list';
export const AUTH_CONSENTS_LIST: RpcContract<
  { readonly user_id: string },
  { readonly connections: readonly Connection[] }
> = {
  pattern: LIST,
  queue: RPC_QUEUES.authServer,
  parseRequest: (input) => ({ user_id: readString(LIST, readRecord(LIST, input), 'user_id') }),
  parseResponse(input) {
    const r = readRecord(LIST, input);
    if (!Array.isArray(r.connections)) throw new ContractViolation(LIST, '`connections` must be an array');
    return {
      connections: r.connections.map((c) => {
        const item = readRecord(LIST, c);
        return {
          client_id: readString(LIST, item, 'client_id'),
          client_name: readString(LIST, item, 'client_name'),
          scopes: readStringArray(LIST, item, 'scopes'),
          connected_at: readString(LIST, item, 'connected_at'),
        };
      }),
    };
  },
};

/**
 * Disconnect: revokes every token of that partner for that member at once, ends the consent, and
 * records `user.consent.revoked` in auth-server's outbox. `revoked` is false when there was no
 * active consent (idempotent).
 */
const REVOKE = 'auth.consents.revoke';
export const AUTH_CONSENTS_REVOKE: RpcContract<
  { readonly user_id: string; readonly client_id: string },
  { readonly revoked: boolean }
> = {
  pattern: REVOKE,
  queue: RPC_QUEUES.authServer,
  parseRequest(input) {
    const r = readRecord(REVOKE, input);
    return { user_id: readString(REVOKE, r, 'user_id'), client_id: readString(REVOKE, r, 'client_id') };
  },
  parseResponse: (input) => ({ revoked: readBoolean(REVOKE, readRecord(REVOKE, input), 'revoked') }),
};

import { listOf, readBoolean, readFields, readString, readStringArray } from '../../validate';
import { RPC_QUEUES, type RpcContract } from '../rpc';

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
  parseRequest: (input) => readFields(LIST, input, { user_id: readString }),
  parseResponse: (input) =>
    readFields(LIST, input, {
      connections: listOf({
        client_id: readString,
        client_name: readString,
        scopes: readStringArray,
        connected_at: readString,
      }),
    }),
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
  parseRequest: (input) => readFields(REVOKE, input, { user_id: readString, client_id: readString }),
  parseResponse: (input) => readFields(REVOKE, input, { revoked: readBoolean }),
};

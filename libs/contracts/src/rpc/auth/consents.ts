import { listOf, readBoolean, readFields, readString, readStringArray, type Read } from '../../validate';
import { RPC_QUEUES, type RpcContract } from '../rpc';

/** `auth.consents.list` / `auth.consents.revoke`: the crew member's connected-partners page. */
const CONNECTION = {
  client_id: readString,
  client_name: readString,
  scopes: readStringArray,
  /** ISO 8601 UTC: when the member first connected this partner. */
  connected_at: readString,
};
export type Connection = Read<typeof CONNECTION>;

const LIST = 'auth.consents.list';
export const AUTH_CONSENTS_LIST: RpcContract<
  { readonly user_id: string },
  { readonly connections: readonly Connection[] }
> = {
  pattern: LIST,
  queue: RPC_QUEUES.authServer,
  parseRequest: (input) => readFields(LIST, input, { user_id: readString }),
  parseResponse: (input) => readFields(LIST, input, { connections: listOf(CONNECTION) }),
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

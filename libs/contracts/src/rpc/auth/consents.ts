import { fieldsContract, listOf, readBoolean, readString, readStringArray, type Read } from '../../validate';

/** `auth.consents.list` / `auth.consents.revoke`: the crew member's connected-partners page. */
const CONNECTION = {
  client_id: readString,
  client_name: readString,
  scopes: readStringArray,
  /** ISO 8601 UTC: when the member first connected this partner. */
  connected_at: readString,
};
export type Connection = Read<typeof CONNECTION>;

export const AUTH_CONSENTS_LIST = fieldsContract(
  'auth.consents.list',
  ['consent-ui'],
  { user_id: readString },
  { connections: listOf(CONNECTION) },
);

/** Disconnect: revokes the partner's tokens for the member, ends the consent; `revoked` false if none was active. */
export const AUTH_CONSENTS_REVOKE = fieldsContract(
  'auth.consents.revoke',
  ['consent-ui'],
  { user_id: readString, client_id: readString },
  { revoked: readBoolean },
);

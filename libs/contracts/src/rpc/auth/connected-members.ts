import { readRecord, readString } from '../../validate';
import { ContractViolation, RPC_QUEUES, type RpcContract } from '../rpc';
import { API_LIMITS } from '../../limits';

/**
 * `auth.consents.connected`: which of these members have a live consent for this partner right
 * now. sponsorship-api asks it once per answer (a page of seats is one question) before it shows a
 * partner a member's name: a partner learns a name only from a member who chose to connect it.
 */
export interface ConnectedMembersRequest {
  readonly client_id: string;
  readonly user_ids: readonly string[];
}

export interface ConnectedMembersResponse {
  /** The subset of `user_ids` connected to `client_id` (order not significant). */
  readonly user_ids: readonly string[];
}

/** At most this many members per question: the largest page of seats. */
export const CONNECTED_MEMBERS_MAX = 200;

const CONNECTED = 'auth.consents.connected';

function readUserIds(record: Record<string, unknown>, max: number): string[] {
  const ids = record.user_ids;
  if (
    !Array.isArray(ids) ||
    ids.length > max ||
    !ids.every((id) => typeof id === 'string' && id.length > 0 && id.length <= API_LIMITS.idMaxLength)
  ) {
    throw new ContractViolation(CONNECTED, `\`user_ids\` must be at most ${max} non-empty strings`);
  }
  return ids as string[];
}

export const AUTH_CONSENTS_CONNECTED: RpcContract<ConnectedMembersRequest, ConnectedMembersResponse> = {
  pattern: CONNECTED,
  queue: RPC_QUEUES.authServer,
  parseRequest(input) {
    const r = readRecord(CONNECTED, input);
    return {
      client_id: readString(CONNECTED, r, 'client_id', API_LIMITS.idMaxLength),
      user_ids: readUserIds(r, CONNECTED_MEMBERS_MAX),
    };
  },
  parseResponse: (input) => ({
    user_ids: readUserIds(readRecord(CONNECTED, input), CONNECTED_MEMBERS_MAX),
  }),
};

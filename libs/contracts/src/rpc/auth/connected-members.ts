import { fieldsContract, text, type FieldRead, type Read } from '../../validate';
import { ContractViolation, RPC_QUEUES } from '../rpc';
import { API_LIMITS } from '../../limits';

/** `auth.consents.connected`: which of these members consent to this partner now (a seat page's names). */
/** At most this many members per question: the largest page of seats. */
export const CONNECTED_MEMBERS_MAX = 200;

const CONNECTED = 'auth.consents.connected';

const userIds: FieldRead<string[]> = (contract, record) => {
  const ids = record.user_ids;
  if (
    !Array.isArray(ids) ||
    ids.length > CONNECTED_MEMBERS_MAX ||
    !ids.every((id) => typeof id === 'string' && id.length > 0 && id.length <= API_LIMITS.idMaxLength)
  ) {
    throw new ContractViolation(
      contract,
      `\`user_ids\` must be at most ${CONNECTED_MEMBERS_MAX} non-empty strings`,
    );
  }
  return ids as string[];
};

const REQUEST = { client_id: text(API_LIMITS.idMaxLength), user_ids: userIds };

const RESPONSE = {
  /** The subset of `user_ids` connected to `client_id` (order not significant). */
  user_ids: userIds,
};
export type ConnectedMembersResponse = Read<typeof RESPONSE>;

export const AUTH_CONSENTS_CONNECTED = fieldsContract(
  RPC_QUEUES.authServer,
  CONNECTED,
  ['sponsorship-api'],
  REQUEST,
  RESPONSE,
);

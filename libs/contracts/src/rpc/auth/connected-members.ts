import { fieldsContract, text, textList, type Read } from '../../validate';
import { API_LIMITS } from '../../limits';

/** `auth.consents.connected`: which of these members consent to this partner now (a seat page's names). */
/** At most this many members per question: the largest page of seats. */
export const CONNECTED_MEMBERS_MAX = 200;

const userIds = textList(CONNECTED_MEMBERS_MAX, API_LIMITS.idMaxLength, 1);

const REQUEST = { client_id: text(API_LIMITS.idMaxLength), user_ids: userIds };

const RESPONSE = {
  /** The subset of `user_ids` connected to `client_id` (order not significant). */
  user_ids: userIds,
};
export type ConnectedMembersResponse = Read<typeof RESPONSE>;

export const AUTH_CONSENTS_CONNECTED = fieldsContract(
  'auth.consents.connected',
  ['sponsorship-api'],
  REQUEST,
  RESPONSE,
);
